"""Before the agent calls a paid model with a budget used up: the owner's request is held and
a card asks: "Allow $N more today" (then the request is answered) or "Stay local" (the local
model answers it, or the card says plainly that none can). The held request lives in the
buttons' tokens (state.db), so a restart between the card and the tap loses nothing."""

from __future__ import annotations

import time
from dataclasses import replace

from core.agent.offline import local_answer
from core.agent.quest import AgentLimits, Quest
from core.agent.trail import Trail
from core.bus import Bus
from core.commands.registry import FreeTextHandler, PressContext, Router
from core.errors import DeliveryFailed
from core.events import Button, Card, CardKind, Inbound
from core.llm.budget import Budget, BudgetStatus, dollars
from core.llm.types import ModelRouter
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.security.owner_view import OwnerView
from core.security.tokens import ActionTokens

ALLOW = "budget.allow"
STAY_LOCAL = "budget.stay_local"
HOLD_TTL = 86400.0  # a held request can be answered for a day
LOCAL_LABEL = (
    "Answered by the small local model on this machine because you chose to stay within the "
    "budget: expect a weaker answer, and it cannot act for you. Nothing went to a paid model."
)
NOT_LOCAL = (
    "No local model here can answer requests (set LANCELOT_LOCAL_MODEL to a chat model you "
    "choose), so this request stays unanswered. Nothing went to a paid model; /usage shows "
    "the budget."
)
_LOCAL_SYSTEM = "You are Lancelot, the owner's agent."


class BudgetHold:
    """Stands before the agent (`answer`, the free-text handler) while a budget is used up."""

    def __init__(
        self,
        budget: Budget,
        answer: FreeTextHandler,
        router: ModelRouter,
        tokens: ActionTokens,
        bus: Bus,
        ledger: ReceiptStore,
        limits: AgentLimits,
        owner: OwnerView,
    ) -> None:
        self._budget = budget
        self._owner = owner  # the time of a choice, in the owner's zone
        self._answer = answer
        self._router = router
        self._tokens = tokens
        self._bus = bus
        self._ledger = ledger
        self._limits = limits

    def register(self, router: Router) -> None:
        """Answer free text on the agent's `router`, before the agent; add the card's two
        buttons."""
        router.answer_free_text(self.handle)
        router.action(ALLOW, self.on_allow)
        router.action(STAY_LOCAL, self.on_stay_local)

    async def handle(self, event: Inbound, text: str, receipt_id: str) -> Card:
        """The agent's answer, or (a budget used up) the card that asks first."""
        status = await self._budget.reached() if self._router.has_flagship() else None
        if status is None:
            return await self._answer(event, text, receipt_id)
        card = _ask_card(status, text, self._budget.caps.step)
        held = {
            "channel": event.channel,
            "sender_id": event.sender_id,
            "chat_id": event.chat_id,
            "text": text,  # whole: it is what gets answered after the tap
            "receipt_id": receipt_id,
        }
        allow = await self._tokens.issue(ALLOW, held, card.correlation_id, HOLD_TTL)
        local = await self._tokens.issue(STAY_LOCAL, held, card.correlation_id, HOLD_TTL)
        self._ledger.append(
            Receipt(
                action_type="budget_ask",
                action_name=status.reached or "",
                inputs={"text": text[:2000]},
                outputs={"reason": status.reason(), "card_id": card.correlation_id},
                status=ReceiptStatus.SKIPPED,
                parent_id=receipt_id,
                quest_id=receipt_id,
            )
        )
        allow_label = f"Allow {dollars(self._budget.caps.step)} more today"
        return replace(card, buttons=(Button(allow_label, allow), Button("Stay local", local)))

    async def on_allow(self, ctx: PressContext) -> Card | None:
        """Raise today's allowance, then answer the held request with the paid model."""
        event, receipt_id = _held(ctx)
        status = await self._budget.allow(ctx.event.sender_id, ctx.receipt_id)
        at = self._owner.when(time.time())
        note = (
            f"You allowed {dollars(self._budget.caps.step)} more today at {at}; "
            f"{dollars(status.allowance)} extra allowed today in all. Answering your request."
        )
        await self._bus.update(ctx.card_id, _decided_card(ctx, "More allowed today", note))
        await self._reply(event, await self._answer(event, event.text, receipt_id))
        return None

    async def on_stay_local(self, ctx: PressContext) -> Card | None:
        """Answer the held request with the local model, or say that none can."""
        event, receipt_id = _held(ctx)
        at = self._owner.when(time.time())
        note = f"You chose to stay local at {at}: no paid model was called."
        await self._bus.update(ctx.card_id, _decided_card(ctx, "Staying local", note))
        trail = Trail(self._ledger, receipt_id)
        trail.root = trail.record(
            "budget_stay_local",
            event.channel,
            inputs={"text": event.text[:2000], "by": ctx.event.sender_id},
            parent_id=ctx.receipt_id,
        )
        answer = None
        if self._limits.local_answers:
            quest = Quest(
                self._router,
                trail,
                event.channel,
                typing=lambda: self._bus.typing(event.channel, event.chat_id),
                limits=self._limits,
                system=_LOCAL_SYSTEM,
            )
            answer = await local_answer(quest, event.text, LOCAL_LABEL)
        if answer is None:
            trail.record("agent_reply", "no_local_model", outputs={"response": NOT_LOCAL})
            answer = Card(CardKind.REPLY, "No local model to answer", NOT_LOCAL)
        await self._reply(event, answer)
        return None

    async def _reply(self, event: Inbound, card: Card) -> None:
        try:
            await self._bus.send(event.channel, event.chat_id, card)
        except DeliveryFailed:  # queued or failed: the outbox and its receipts say which
            return


def _held(ctx: PressContext) -> tuple[Inbound, str]:
    """The held request from the button's token, and its inbound receipt."""
    payload = ctx.payload
    event = Inbound(
        str(payload["channel"]),
        str(payload["sender_id"]),
        str(payload["chat_id"]),
        str(payload["text"]),
    )
    return event, str(payload["receipt_id"])


def _ask_card(status: BudgetStatus, text: str, step: float) -> Card:
    shown = text if len(text) <= 200 else text[:199] + "…"
    return Card(
        CardKind.APPROVAL,
        "Model budget used up",
        f"{status.reason().capitalize()}.\n\nYour request is held: “{shown}”\n\n"
        f"Allow {dollars(step)} more today to have the paid model answer it, or stay local: "
        "the small model on this machine answers instead (weaker, and it cannot act).",
        fields=status.fields()[:3],
    )


def _decided_card(ctx: PressContext, title: str, note: str) -> Card:
    text = str(ctx.payload.get("text", ""))
    shown = text if len(text) <= 200 else text[:199] + "…"
    return Card(CardKind.APPROVAL, title, f"“{shown}”\n\n{note}", correlation_id=ctx.card_id)
