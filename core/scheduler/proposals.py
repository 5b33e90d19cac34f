"""Jobs proposed from chat: `/remind <when> <what>`, `/jobs new <schedule> <what>` and the
agent's propose_job all end in one card saying when the job fires next, what it does and its
tier, with Create / Cancel (single-use signed tokens). An ambiguous time is asked back with
one button per reading; a time already past is refused."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.bus import Bus
from core.clock import WallClock
from core.commands.registry import CommandContext, CommandRegistry, PressContext, Router
from core.events import Button, Card, CardKind, Inbound
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.registry import JobReceipt
from core.scheduler.chat_jobs import (
    REMINDER,
    TASK,
    TIERS,
    ChatJobs,
    Proposal,
    next_run,
    spec_of,
)
from core.scheduler.model import ChatJobRow
from core.scheduler.when import (
    Ambiguous,
    Every,
    Once,
    Unreadable,
    read_when,
    say_moment,
    zone_now,
)
from core.security.tokens import ActionTokens

CREATE, CANCEL, PICK = "jobs.create", "jobs.cancel", "jobs.pick"
TOKEN_TTL = 24 * 3600.0
MAX_WHAT = 500  # characters of what a job does (it is shown on every card it sends)
USAGE = (
    "Say when, then what: /remind in 20 minutes stretch, /remind tomorrow at 9am call Anna, "
    "/jobs new every Monday at 08:00 summarise the logs."
)


@dataclass(frozen=True, slots=True)
class Offered:
    """What a proposal came to: the card sent, and one line for the agent's model."""

    card: Card
    outcome: str
    ok: bool


class JobProposals:
    """The proposal cards and their buttons."""

    def __init__(
        self,
        jobs: ChatJobs,
        tokens: ActionTokens,
        bus: Bus,
        ledger: ReceiptStore,
        wall: WallClock,
        zone: str | Callable[[], str],
    ) -> None:
        """`zone`: the owner's timezone, or a function giving it at each use (it can be
        chosen in chat while Lancelot runs)."""
        self._jobs = jobs
        self._tokens = tokens
        self._bus = bus
        self._ledger = ledger
        self._wall = wall
        self._zone_of = zone

    @property
    def _zone(self) -> str:
        return self._zone_of() if callable(self._zone_of) else self._zone_of

    def register(self, registry: CommandRegistry) -> None:
        """/remind and the Create, Cancel and pick buttons (/jobs new comes through
        JobCommands, which calls `offer`)."""
        router = Router("job proposals")
        router.command(
            "remind",
            "a reminder at a time, e.g. /remind in 2 minutes stretch",
            self.remind,
            "<when> <what>",
        )
        router.action(CREATE, self._create)
        router.action(CANCEL, self._cancel)
        router.action(PICK, self._pick)
        registry.include(router)

    async def remind(self, ctx: CommandContext) -> Card:
        """/remind <when> <what>."""
        return (await self.offer(ctx.args, f"remind-{ctx.receipt_id}", via="/remind")).card

    async def offer(
        self, text: str, card_id: str, *, via: str, what: str = "", kind: str = REMINDER
    ) -> Offered:
        """Read `text` (a time, then what to do unless `what` is given) and make the card
        for a reminder or a task (the agent does it): a proposal with Create / Cancel, a
        question with one button per reading, or a refusal that says why."""
        now = zone_now(self._zone, self._wall.time())
        reading, rest = read_when(text, now)
        what = (what or rest).strip()
        if isinstance(reading, Unreadable):
            return _refusal(card_id, f"{reading.reason}. {USAGE}", f"unreadable: {reading.reason}")
        if not what:
            return _refusal(card_id, f"What should I remind you of? {USAGE}", "nothing to do")
        if len(what) > MAX_WHAT:
            return _refusal(
                card_id, f"Say what in at most {MAX_WHAT} characters.", "refused: too long"
            )
        if isinstance(reading, Ambiguous):
            buttons = []
            for label, schedule in reading.choices:
                payload = Proposal(schedule, what, self._zone, kind).payload()
                buttons.append(Button(label, await self._token(PICK, payload, card_id)))
            buttons.append(Button("Cancel", await self._token(CANCEL, {"what": what}, card_id)))
            card = Card(
                CardKind.REPLY,
                "Which time?",
                f"I can read that time more than one way: {reading.question}",
                buttons=tuple(buttons),
                correlation_id=card_id,
            )
            return Offered(card, f"asked the owner which time: {reading.question}", True)
        proposal = Proposal(reading, what, self._zone, kind)
        if isinstance(reading, Once) and reading.at.timestamp() <= now.timestamp():
            return _refusal(
                card_id,
                f"{self._say(reading.at.timestamp())} has already passed ({self._zone}); "
                "say a time still to come.",
                "refused: that time has passed",
            )
        card = await self._proposal_card(proposal, card_id)
        self._ledger.append(
            Receipt(
                action_type=JobReceipt.JOB_PROPOSED,
                action_name=proposal.what[:80],
                inputs={"text": text[:500], "what": what[:500]},
                outputs={"next_run": card.fields[0][1], "tier": TIERS[kind], "kind": kind},
                metadata={"via": via},
            )
        )
        return Offered(card, f"sent a card for the owner to Create or Cancel: {card.body}", True)

    async def _proposal_card(self, proposal: Proposal, card_id: str) -> Card:
        now = self._wall.time()
        tier = TIERS[proposal.kind]
        preview = ChatJobRow("", _at(proposal), _cron(proposal), self._zone, "", tier, now)
        spec = spec_of(preview)
        first = next_run(spec, now)
        when = f"{self._say(first)} ({self._zone})" if first else "-"
        how = "once" if isinstance(proposal.schedule, Once) else proposal.schedule.said
        payload = proposal.payload()
        task = proposal.kind == TASK
        if self._jobs.asks_first(spec):
            note = "each run waits for your Approve; quiet hours hold the card"
        else:
            note = "runs without asking; quiet hours hold it"
        return Card(
            CardKind.REPLY,
            "Create this job?" if task else "Create this reminder?",
            proposal.what,
            fields=(
                ("Next", when),
                ("Repeats", how),
                ("Does", "the agent does it in this chat" if task else "sends you this card"),
                ("Tier", f"{tier} ({note})"),
            ),
            buttons=(
                Button("Create", await self._token(CREATE, payload, card_id)),
                Button("Cancel", await self._token(CANCEL, {"what": proposal.what}, card_id)),
            ),
            correlation_id=card_id,
        )

    def _say(self, epoch: float) -> str:
        return say_moment(zone_now(self._zone, epoch), zone_now(self._zone, self._wall.time()))

    async def _token(self, action: str, payload: dict[str, Any], card_id: str) -> str:
        return await self._tokens.issue(action, payload, card_id, ttl=TOKEN_TTL)

    async def _pick(self, ctx: PressContext) -> Card:
        proposal = Proposal.from_payload(ctx.payload)
        if isinstance(proposal.schedule, Once) and proposal.schedule.at.timestamp() <= (
            self._wall.time()
        ):
            return _done(ctx.card_id, "That time has passed; nothing was created.")
        return await self._proposal_card(proposal, ctx.card_id)

    async def _create(self, ctx: PressContext) -> Card:
        proposal = Proposal.from_payload(ctx.payload)
        owner = Inbound(ctx.event.channel, ctx.event.sender_id, ctx.event.chat_id, "")
        spec = await self._jobs.create(proposal, via=ctx.card_id, owner=owner)
        if spec is None:
            self._not_created(proposal.what, "its time had passed")
            return _done(ctx.card_id, "That time has passed; nothing was created.")
        first = next_run(spec, self._wall.time() - 1)
        when = self._say(first) if first else "-"
        return _done(
            ctx.card_id,
            f"Created {spec.name}: next {when} ({self._zone}). /jobs lists it.",
            title="Job created" if proposal.kind == TASK else "Reminder created",
        )

    async def _cancel(self, ctx: PressContext) -> Card:
        self._not_created(str(ctx.payload.get("what", "")), "cancelled by the owner")
        return _done(ctx.card_id, "Cancelled: nothing was created.")

    def _not_created(self, what: str, why: str) -> None:
        self._ledger.append(
            Receipt(
                action_type=JobReceipt.JOB_NOT_CREATED,
                action_name=what[:80],
                outputs={"why": why},
                status=ReceiptStatus.SKIPPED,
            )
        )


def _at(proposal: Proposal) -> float | None:
    return proposal.schedule.at.timestamp() if isinstance(proposal.schedule, Once) else None


def _cron(proposal: Proposal) -> str | None:
    return proposal.schedule.cron if isinstance(proposal.schedule, Every) else None


def _refusal(card_id: str, body: str, outcome: str) -> Offered:
    card = Card(CardKind.REPLY, "No reminder made", body, correlation_id=card_id)
    return Offered(card, outcome, False)


def _done(card_id: str, body: str, *, title: str = "No reminder made") -> Card:
    return Card(CardKind.REPLY, title, body, correlation_id=card_id)
