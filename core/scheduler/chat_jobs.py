"""Jobs the owner creates from chat (/remind, /jobs new, the agent's propose_job): kept in
scheduler.db, scheduled by the same engine as the declared jobs (claimed once, gated, with
receipts), and delivered as a card through the outbox when they fire.

A one-off reminder's run is claimed once (its next run moves to none in the same
transaction), so a restart, a catch-up and the timer never deliver it twice; one due while
Lancelot was down fires once after start. Quiet hours hold the card until they end.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from core.bus import Bus
from core.clock import WallClock
from core.events import Card, CardKind
from core.governance.kinds import JobReceipt
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt
from core.scheduler.config import JobSpec
from core.scheduler.engine import Scheduler
from core.scheduler.job import JobContext
from core.scheduler.quiet import quiet_until
from core.scheduler.store import ChatJobRow
from core.scheduler.triggers import next_after, trigger_for
from core.scheduler.when import Every, Once, Schedule, zone_now
from soul import Soul

log = logging.getLogger(__name__)

TARGET = "builtin:reminder"  # what every job created from chat runs
TIER = "T0"  # it only sends the owner a card
ONCE_GRACE = 30 * 86400.0  # a reminder missed while down still comes, up to a month late
EVERY_GRACE = 6 * 3600.0


@dataclass(frozen=True, slots=True)
class Proposal:
    """A job as proposed on a card, before the owner taps Create."""

    schedule: Schedule
    what: str
    zone: str

    def payload(self) -> dict[str, object]:
        """What the Create button's token carries."""
        at = self.schedule.at.timestamp() if isinstance(self.schedule, Once) else None
        cron = self.schedule.cron if isinstance(self.schedule, Every) else None
        said = self.schedule.said if isinstance(self.schedule, Every) else None
        return {"at": at, "cron": cron, "said": said, "what": self.what, "zone": self.zone}

    @classmethod
    def from_payload(cls, data: dict[str, object]) -> Proposal:
        """Back from a token's payload."""
        zone = str(data["zone"])
        if data.get("at") is not None:
            schedule: Schedule = Once(zone_now(zone, float(str(data["at"]))))
        else:
            schedule = Every(str(data["cron"]), str(data.get("said") or data["cron"]))
        return cls(schedule, str(data["what"]), zone)


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
        """Schedule every job kept from earlier runs (before the scheduler starts)."""
        self._scheduler.register(TARGET, self.deliver)
        for row in await self._scheduler.store.chat_jobs():
            self._rows[row.name] = row
            await self._scheduler.add(spec_of(row))

    def owns(self, name: str) -> bool:
        """Whether `name` was created from chat (it can be deleted)."""
        return name in self._rows

    async def create(self, proposal: Proposal, *, via: str) -> JobSpec | None:
        """Keep and schedule the proposed job; None when its one time has already passed."""
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
            tier=TIER,
            created_at=now,
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
                inputs={"what": row.what, "schedule": spec.describe_trigger, "tier": row.tier},
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

    async def deliver(self, ctx: JobContext) -> str:
        """The job's code: the reminder card, through the outbox; during quiet hours the run
        is held (scheduled again for their end) and says so."""
        row = self._rows.get(ctx.job)
        if row is None:
            raise LookupError(f"{ctx.job} is not a job created from chat")
        now = self._wall.time()
        soul = self._soul()
        until = quiet_until(soul.scheduling_boundaries.quiet_hours if soul else None, now)
        if until is not None:
            await self._scheduler.defer(row.name, until)
            return f"held for quiet hours until {zone_now(row.timezone, until):%H:%M}"
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
