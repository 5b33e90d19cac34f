"""Jobs the owner creates from chat (/remind, /jobs new, the agent's propose_job): kept in
scheduler.db, scheduled by the same engine as the declared jobs (claimed once, gated, with
receipts). A reminder is delivered as a card through the outbox when it fires; a task is the
owner's own words handed to the agent, in the chat the job was created from, each run only
with the owner's Approve (its tier is above the Soul's scheduling boundary).

A one-off reminder's run is claimed once (its next run moves to none in the same
transaction), so a restart, a catch-up and the timer never deliver it twice; one due while
Lancelot was down fires once after start. Quiet hours hold the card (or the approval card a
task asks with) until they end.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from core.bus import Bus
from core.clock import WallClock
from core.events import Card, CardKind, Inbound
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt
from core.receipts.registry import JobReceipt
from core.scheduler.config import JobSpec
from core.scheduler.engine import Scheduler
from core.scheduler.job import ApprovalAsker, JobContext
from core.scheduler.model import ChatJobRow
from core.scheduler.quiet import quiet_until
from core.scheduler.triggers import next_after, trigger_for
from core.scheduler.when import Every, Once, Schedule, zone_now
from soul import Soul

log = logging.getLogger(__name__)

TARGET = "builtin:reminder"  # what every job created from chat runs
REMINDER, TASK = "reminder", "task"
# A reminder only sends the owner a card; a task lets the agent act, so each run asks first.
TIERS = {REMINDER: "T0", TASK: "T2"}
ONCE_GRACE = 30 * 86400.0  # a reminder missed while down still comes, up to a month late
EVERY_GRACE = 6 * 3600.0


@dataclass(frozen=True, slots=True)
class Proposal:
    """A job as proposed on a card, before the owner taps Create."""

    schedule: Schedule
    what: str
    zone: str
    kind: str = REMINDER

    def payload(self) -> dict[str, object]:
        """What the Create button's token carries."""
        at = self.schedule.at.timestamp() if isinstance(self.schedule, Once) else None
        cron = self.schedule.cron if isinstance(self.schedule, Every) else None
        said = self.schedule.said if isinstance(self.schedule, Every) else None
        return {
            "at": at,
            "cron": cron,
            "said": said,
            "what": self.what,
            "zone": self.zone,
            "kind": self.kind,
        }

    @classmethod
    def from_payload(cls, data: dict[str, object]) -> Proposal:
        """Back from a token's payload."""
        zone = str(data["zone"])
        if data.get("at") is not None:
            schedule: Schedule = Once(zone_now(zone, float(str(data["at"]))))
        else:
            schedule = Every(str(data["cron"]), str(data.get("said") or data["cron"]))
        kind = TASK if data.get("kind") == TASK else REMINDER
        return cls(schedule, str(data["what"]), zone, kind)


class ChatJobs:
    """Creates, lists and deletes jobs from chat, and is the code they run."""

    def __init__(
        self,
        scheduler: Scheduler,
        bus: Bus,
        ledger: ReceiptStore,
        wall: WallClock,
        soul: Callable[[], Soul | None],
    ) -> None:
        self._scheduler = scheduler
        self._bus = bus
        self._ledger = ledger
        self._wall = wall
        self._soul = soul
        self._rows: dict[str, ChatJobRow] = {}

    async def load(self) -> None:
        """Schedule every job kept from earlier runs (before the scheduler starts). A
        reminder whose run a stop cut short before its card reached the outbox is due again
        at that time: the start's catch-up delivers it, under the same card id, so a card the
        outbox already held is not sent twice."""
        self._scheduler.register(TARGET, self.deliver)
        store = self._scheduler.store
        for row in await store.chat_jobs():
            self._rows[row.name] = row
            await self._scheduler.add(spec_of(row))
        reminders = [name for name, row in self._rows.items() if row.kind == REMINDER]
        for run in await store.take_interrupted(reminders):
            log.warning("scheduler: %s was cut short by a stop; delivering it again", run.job)
            await store.set_next(run.job, run.scheduled_for)

    def asks_first(self, spec: JobSpec) -> bool:
        """Whether each run of `spec` waits for the owner's Approve (the gates decide)."""
        return self._scheduler.gates.needs_approval(spec)

    def owns(self, name: str) -> bool:
        """Whether `name` was created from chat (it can be deleted)."""
        return name in self._rows

    async def create(self, proposal: Proposal, *, via: str, owner: Inbound) -> JobSpec | None:
        """Keep and schedule the proposed job (a task runs in `owner`'s channel and chat);
        None when its one time has already passed."""
        now = self._wall.time()
        schedule = proposal.schedule
        at = schedule.at.timestamp() if isinstance(schedule, Once) else None
        if at is not None and at <= now:
            return None
        row = ChatJobRow(
            name=_name(proposal.what, now),
            at=at,
            cron=schedule.cron if isinstance(schedule, Every) else None,
            timezone=proposal.zone,
            what=proposal.what,
            tier=TIERS[proposal.kind],
            created_at=now,
            kind=proposal.kind,
            channel=owner.channel,
            sender=owner.sender_id,
            chat=owner.chat_id,
        )
        spec = spec_of(row)
        first = next_run(spec, now)
        if not await self._scheduler.store.add_chat_job(row, first):
            raise ValueError(f"a job named {row.name} exists")
        self._rows[row.name] = row
        await self._scheduler.add(spec)
        self._ledger.append(
            Receipt(
                action_type=JobReceipt.JOB_CREATED,
                action_name=row.name,
                inputs={
                    "what": row.what,
                    "kind": row.kind,
                    "schedule": spec.describe_trigger,
                    "tier": row.tier,
                },
                outputs={"next_run_at": first},
                metadata={"via": via},
            )
        )
        return spec

    async def delete(self, name: str) -> bool:
        """Forget a job created from chat (its history and receipts stay)."""
        if name not in self._rows:
            return False
        self._scheduler.forget(name)
        await self._scheduler.store.delete_chat_job(name)
        row = self._rows.pop(name)
        self._ledger.append(
            Receipt(
                action_type=JobReceipt.JOB_DELETED,
                action_name=name,
                inputs={"what": row.what},
                metadata={"via": "owner"},
            )
        )
        return True

    def _quiet_until(self) -> float | None:
        soul = self._soul()
        return quiet_until(
            soul.scheduling_boundaries.quiet_hours if soul else None, self._wall.time()
        )

    def quiet_asks(self, ask: ApprovalAsker) -> ApprovalAsker:
        """`ask`, except that a chat job's approval card waits out quiet hours: the job is
        scheduled again for their end, and asks then."""

        async def asking(spec: JobSpec, ctx: JobContext) -> None:
            until = self._quiet_until() if spec.name in self._rows else None
            if until is not None:
                await self._scheduler.defer(spec.name, until)
                return
            await ask(spec, ctx)

        return asking

    async def deliver(self, ctx: JobContext) -> str:
        """The job's code: the reminder card through the outbox, or the task's words to the
        agent as the owner's message; during quiet hours a run nobody just approved is held
        (scheduled again for their end) and says so."""
        row = self._rows.get(ctx.job)
        if row is None:
            raise LookupError(f"{ctx.job} is not a job created from chat")
        until = None if ctx.approved else self._quiet_until()
        if until is not None:
            await self._scheduler.defer(row.name, until)
            return f"held for quiet hours until {zone_now(row.timezone, until):%H:%M}"
        if row.kind == TASK:
            await self._bus.publish(Inbound(row.channel, row.sender, row.chat, row.what))
            return f"handed to the agent on {row.channel}: {row.what}"[:300]
        card = Card(
            kind=CardKind.NOTICE,
            title="Reminder",
            body=row.what,
            fields=(("When", f"{zone_now(row.timezone, ctx.scheduled_for):%a %d %b %H:%M}"),),
            correlation_id=f"reminder-{row.name}-{int(ctx.scheduled_for)}",
        )
        refs = await self._bus.broadcast(card)
        return f"delivered to {len(refs)} chat(s): {row.what}"[:300]


def spec_of(row: ChatJobRow) -> JobSpec:
    """The engine's view of a job created from chat."""
    return JobSpec(
        name=row.name,
        run=TARGET,
        at=row.at,
        cron=row.cron,
        timezone=row.timezone,
        grace_seconds=ONCE_GRACE if row.at is not None else EVERY_GRACE,
        tier=row.tier,
    )


def next_run(spec: JobSpec, now: float) -> float | None:
    """When `spec` fires first after `now`."""
    return next_after(trigger_for(spec), now)


def _name(what: str, now: float) -> str:
    words = re.findall(r"[a-z0-9]+", what.lower())[:3] or ["job"]
    tag = hashlib.sha256(f"{what}{now}".encode()).hexdigest()[:4]
    return "-".join(words)[:40] + "-" + tag
