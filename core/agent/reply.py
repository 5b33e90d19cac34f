"""The last gate before the owner: claims checked against receipts, no simulated progress."""

from __future__ import annotations

from collections.abc import Callable

from core.agent.answer import FinalAnswer
from core.agent.governor import NOTE, govern
from core.agent.honesty import ToolRun, check_answer, runs_on_record
from core.agent.quest import Quest
from core.agent.tools import ToolTable
from core.errors import ProviderUnavailable
from core.events import Card, CardKind
from core.governance.gateway import ToolGateway
from core.receipts.base import ReceiptStore
from core.receipts.model import ReceiptStatus

MAX_LISTED = 8


def _ran_field(runs: list[ToolRun], failures: list[str]) -> tuple[tuple[str, str], ...]:
    """What ran, straight from the receipts (never from the model's words), and the tool
    calls that failed before anything ran."""
    done = [r.command for r in runs if r.succeeded]
    failed = [r.command for r in runs if not r.succeeded] + failures
    fields = []
    if done:
        fields.append(("Ran", "; ".join(done[:MAX_LISTED])))
    if failed:
        fields.append(("Failed", "; ".join(failed[:MAX_LISTED])))
    return tuple(fields)


def _title(runs: list[ToolRun], failures: list[str]) -> str:
    """What the card's title says about the work, from the receipts alone."""
    succeeded = sum(r.succeeded for r in runs)
    if not runs and not failures:
        return "Answer"
    if succeeded == len(runs) + len(failures):
        return "Done"
    return "Partly done" if succeeded else "Not done"


class ReplyGate:
    """Turns the model's final answer into the card the owner sees, and records it."""

    def __init__(
        self,
        ledger: ReceiptStore,
        tools: ToolTable,
        gateway: ToolGateway | None,
        jobs_running: Callable[[], bool],
    ) -> None:
        self._ledger = ledger
        self._tools = tools
        self._gateway = gateway
        self._jobs_running = jobs_running

    async def reply(
        self, quest: Quest, answer: FinalAnswer, *, title: str | None = None
    ) -> tuple[Card, int]:
        """The checked card, and how many corrections the honesty gate made (`title`: the
        card's, when the request ended otherwise than by answering, e.g. "Stopped")."""
        notes: list[str] = []
        if self._gateway is not None:
            undone = await self._gateway.finish(quest.trail.quest_id)
            if undone is not None:
                notes.append(f"A step failed its check, so its changes were undone: {undone}")
        runs = await runs_on_record(self._ledger, quest.run_receipts, self._tools.targets)
        checked = check_answer(answer, runs, self._tools.capabilities())
        running = self._jobs_running()
        body = govern(checked.answer.response_to_user, job_running=running)
        after = govern(checked.answer.next_action, job_running=running)
        blocked = body.blocked + after.blocked
        notes.extend(f"Correction: {c}" for c in checked.corrections)
        if blocked:
            notes.append(NOTE)
        text = "\n\n".join(p for p in (body.text, *notes) if p) or "(no answer)"
        fields = _ran_field(runs, quest.failures)
        if after.text:
            fields += (("Next", after.text),)
        if title is None:
            title = "Stopped at the limit" if quest.stopped else _title(runs, quest.failures)
        quest.trail.record(
            "agent_reply",
            title.lower(),
            outputs={
                "response": body.text,
                "actions_taken": [c.model_dump() for c in checked.answer.actions_taken],
                "verified_receipts": [r.receipt_id for r in checked.verified],
                "next_action": after.text,
                "corrections": list(checked.corrections),
                "blocked_phrases": list(blocked),
            },
            metadata={"iterations": quest.iterations},
        )
        return Card(CardKind.REPLY, title, text, fields=fields), len(checked.corrections)

    async def outage(self, quest: Quest, exc: ProviderUnavailable) -> Card:
        """The provider failed mid-request: say so, and list only what receipts show ran."""
        runs = await runs_on_record(self._ledger, quest.run_receipts, self._tools.targets)
        body = (
            f"{exc.user_message} I could not finish this request"
            + (", and nothing was run." if not runs else "; what ran before it failed is below.")
            + " Try again in a while; commands like /run still work."
        )
        quest.trail.record(
            "agent_reply",
            "provider_unavailable",
            outputs={"response": body},
            status=ReceiptStatus.FAILURE,
            error=str(exc)[:500],
        )
        fields = _ran_field(runs, quest.failures)
        return Card(CardKind.REPLY, "Model provider unavailable", body, fields=fields)
