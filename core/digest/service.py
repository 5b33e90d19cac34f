"""Digests: built from the ledger since the last one, sent once through the outbox, with
Open receipts / Show failures / Pending approvals buttons; /digest sends one now."""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, field

from core.bus import Bus
from core.clock import WallClock
from core.commands.registry import CommandContext, CommandRegistry, PressContext, Router
from core.digest.card import digest_card, failures_card
from core.digest.collect import DigestData, collect
from core.events import Button, Card, CardKind
from core.governance.approvals import ApprovalState, ApprovalStore
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt
from core.scheduler.job import JobContext
from core.scheduler.store import SchedulerStore
from core.security.owner_view import OwnerView
from core.security.tokens import ActionTokens
from core.security.viewer_access import ViewerAccess

log = logging.getLogger(__name__)

MARK = "digest.covered_until"
KEPT_CARDS = 32
FIRST_PERIOD = 86400.0  # the first digest looks back one day


@dataclass
class DigestService:
    """Builds and sends digests. `approvals` is None when governance is off."""

    bus: Bus
    ledger: ReceiptStore
    approvals: ApprovalStore | None
    store: SchedulerStore
    tokens: ActionTokens
    wall: WallClock
    owner: OwnerView  # the card's times in the owner's zone
    viewer: ViewerAccess | None = None
    public_url: str = ""
    _cards: OrderedDict[str, DigestData] = field(default_factory=OrderedDict)

    def register(self, registry: CommandRegistry) -> None:
        """/digest and the card's buttons."""
        router = Router("digest")
        router.command("digest", "a digest of what happened since the last one", self.command)
        router.action("digest.failures", self._show_failures)
        router.action("digest.approvals", self._show_approvals)
        registry.include(router)

    async def scheduled(self, ctx: JobContext) -> str:
        """The daily_digest job: one digest per scheduled time, whatever restarts happen."""
        return await self.send(f"digest-{ctx.job}-{int(ctx.scheduled_for)}", ctx.scheduled_for)

    async def command(self, ctx: CommandContext) -> Card | None:
        """/digest: send one now (to every channel, as the scheduled one goes)."""
        detail = await self.send(f"digest-now-{ctx.receipt_id}", self.wall.time())
        if detail.startswith("delivered to 0"):
            return Card(kind=CardKind.REPLY, title="Digest queued", body=detail)
        return None

    async def send(self, card_id: str, until: float) -> str:
        """Build the digest for (last one, until] and broadcast it under a key of its own, so
        a retry or a restart re-sends the same card at most once per chat."""
        since = await self.store.mark(MARK) or until - FIRST_PERIOD
        data = await self._collect(since, until)
        card = digest_card(data, card_id, await self._buttons(card_id, data), self.owner)
        self._keep(card_id, data)
        refs = await self.bus.broadcast(card, key=card_id)
        await self.store.set_mark(MARK, max(until, since))
        self.ledger.append(
            Receipt(
                action_type="digest_sent",
                action_name="digest",
                inputs={"card_id": card_id, "since": data.since, "until": data.until},
                outputs={"delivered": len(refs), "failures": len(data.failures)},
            )
        )
        return f"delivered to {len(refs)} chat(s); the rest stay queued in the outbox"

    def _keep(self, card_id: str, data: DigestData) -> None:
        self._cards[card_id] = data
        while len(self._cards) > KEPT_CARDS:
            self._cards.popitem(last=False)

    async def _buttons(self, card_id: str, data: DigestData) -> tuple[Button, ...]:
        buttons = []
        if self.viewer is not None:
            link = await self.viewer.issue_link()
            buttons.append(Button("Open receipts", url=f"{self.public_url}/receipts?t={link}"))
        for label, action in (
            ("Show failures", "digest.failures"),
            ("Pending approvals", "digest.approvals"),
        ):
            # The period goes with the token: after a restart the digest is collected again.
            period = {"since": data.since, "until": data.until}
            token = await self.tokens.issue(action, period, card_id, ttl=7 * 86400)
            buttons.append(Button(label, token))
        return tuple(buttons)

    async def _data(self, ctx: PressContext) -> DigestData | None:
        """The pressed digest's data: kept since it was sent, or collected again for its
        period (a restart since, or an old card)."""
        data = self._cards.get(ctx.card_id)
        if data is not None:
            return data
        try:
            since, until = float(ctx.payload["since"]), float(ctx.payload["until"])
        except (KeyError, TypeError, ValueError):
            return None
        data = await self._collect(since, until)
        self._keep(ctx.card_id, data)
        return data

    async def _collect(self, since: float, until: float) -> DigestData:
        runs = [r for r in await self.store.runs_since(since) if r.started_at < until]
        return await collect(self.ledger, self.approvals, since, until, runs)

    async def _again(self, ctx: PressContext) -> Card | None:
        """The digest card with fresh buttons (a press spends every token of its card)."""
        data = await self._data(ctx)
        if data is None:
            return None
        return digest_card(data, ctx.card_id, await self._buttons(ctx.card_id, data), self.owner)

    async def _reply(self, ctx: PressContext, card: Card) -> None:
        await self.bus.send(ctx.event.channel, ctx.event.chat_id, card)

    async def _show_failures(self, ctx: PressContext) -> Card | None:
        data = await self._data(ctx)
        if data is None:
            await self._reply(ctx, Card(kind=CardKind.REPLY, title="That digest is too old"))
            return None
        await self._reply(ctx, failures_card(data))
        return await self._again(ctx)

    async def _show_approvals(self, ctx: PressContext) -> Card | None:
        pending = []
        if self.approvals is not None:
            pending = await self.approvals.in_states(ApprovalState.PENDING, limit=20)
        lines = [f"- {a.tier}: {a.action.describe()[:200]}" for a in pending]
        body = "\n".join(lines) or "Nothing is waiting for you."
        if lines:
            body += "\n\n/approvals sends their cards again."
        await self._reply(ctx, Card(kind=CardKind.REPLY, title="Pending approvals", body=body))
        return await self._again(ctx)
