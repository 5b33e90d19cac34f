"""Without a flagship provider: an honest answer, or the local model's, clearly labelled."""

from __future__ import annotations

from core.agent.governor import govern
from core.agent.intent import LocalAware
from core.agent.quest import Quest
from core.errors import ProviderUnavailable
from core.events import Card, CardKind
from core.llm.intent import Intent
from core.llm.types import CompletionRequest, Lane, Message, Role
from core.receipts.model import ReceiptStatus

NO_PROVIDER = (
    "Free-form reasoning needs a model provider, and none is configured. Run `lancelot setup` "
    "in the terminal where I run, or set LANCELOT_PROVIDER (openai, anthropic or gemini) and "
    "its key: OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY (a *_BASE_URL points at a "
    "compatible server). Commands work without one: "
    "/help lists them, and /run runs a command in the workspace under governance."
)
LOCAL_LABEL = (
    "Answered by the small local model on this machine, because no flagship provider is "
    "configured (LANCELOT_PROVIDER): expect a weaker answer, and it cannot act for you."
)
_LOCAL_SYSTEM = "You are Lancelot, a helpful assistant. Answer briefly and truthfully."


async def answer_offline(quest: Quest, intent: Intent, text: str) -> Card:
    """The local model for questions and chat, if it can; otherwise say what is needed."""
    if quest.limits.local_answers and intent in (Intent.KNOWLEDGE_REQUEST, Intent.CONVERSATIONAL):
        card = await local_answer(quest, text, LOCAL_LABEL)
        if card is not None:
            return card
    quest.trail.record(
        "agent_reply",
        "no_provider",
        outputs={"response": NO_PROVIDER},
        status=ReceiptStatus.SKIPPED,
    )
    return Card(CardKind.REPLY, "No model provider configured", NO_PROVIDER)


async def local_answer(quest: Quest, text: str, label: str) -> Card | None:
    """The local model's answer to `text`, governed and ending with `label` (why it was the
    local model); None when there is no local model or it gave nothing usable."""
    router = quest.router
    if isinstance(router, LocalAware) and not router.has_local():
        return None
    request = CompletionRequest(
        (Message(Role.SYSTEM, _LOCAL_SYSTEM), Message(Role.USER, text[:2000])),
        temperature=0.3,
        max_tokens=256,
    )
    try:
        completion = await quest.complete(request, "local_answer", Lane.LOCAL_UTILITY)
    except ProviderUnavailable:
        return None
    governed = govern(completion.text.strip(), job_running=False)
    if not governed.text:
        return None
    quest.trail.record(
        "agent_reply",
        "local",
        outputs={"response": governed.text, "blocked_phrases": list(governed.blocked)},
        metadata={"lane": Lane.LOCAL_UTILITY.value, "provider": completion.provider},
    )
    return Card(CardKind.REPLY, "Answer (local model)", f"{governed.text}\n\n{label}")
