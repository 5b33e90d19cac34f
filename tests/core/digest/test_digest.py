"""The digest after a scripted day, its buttons, and exactly-once delivery through an outage
and a restart."""

from __future__ import annotations

import asyncio
import itertools
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp

from core.delivery.store import OutboxState
from core.digest.collect import ledger_time
from core.errors import DeliveryFailed
from core.events import Card, CardKind, Inbound, MessageRef
from core.receipts.model import Receipt, ReceiptStatus
from tests.fakes.calendar import CalendarClock
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import CHAT, OWNER, say, tap
from tests.fakes.scheduled_app import scheduled_app, scheduler, write_jobs
from tests.fakes.workspace import put

JOBS = """
  daily_digest:
    run: builtin:daily_digest
    cron: "0 8 * * *"
    grace_seconds: 3600
"""


def _next_eight(after: float) -> float:
    day = datetime.fromtimestamp(after, UTC).replace(hour=8, minute=0, second=0, microsecond=0)
    if day.timestamp() <= after:
        day += timedelta(days=1)
    return day.timestamp()


def _day_of_activity(start: float) -> list[Receipt]:
    at = (ledger_time(start + i) for i in itertools.count(1))

    def r(kind: str, name: str = "x", **kw: object) -> Receipt:
        return Receipt(action_type=kind, action_name=name, timestamp=next(at), **kw)  # type: ignore[arg-type]

    return [
        *(r("tool_run", "shell", metadata={"tier": "T0"}) for _ in range(3)),
        r("tool_run", "shell", metadata={"tier": "T1"}),
        r(
            "tool_run",
            "shell",
            metadata={"tier": "T2"},
            status=ReceiptStatus.FAILURE,
            error_message="exit code 1",
        ),
        r("approval_granted"),
        r("approval_denied"),
        r("approval_expired"),
        r("router_decision", "flagship", token_count=1000, metadata={"cost_usd": 0.01}),
        r("router_decision", "local", token_count=500, metadata={"cost_usd": 0.005}),
        r("health_degraded", "health", status=ReceiptStatus.FAILURE),
        r("health_recovered", "health"),
        r(
            "scheduled_job_skipped",
            "nightly",
            status=ReceiptStatus.SKIPPED,
            metadata={"gate": "downtime", "outcome": "missed"},
        ),
    ]


async def test_digest_after_a_scripted_day(tmp_path: Path) -> None:
    clock = CalendarClock(time.time())
    phone = MemoryChannel()
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(tmp_path / "home", clock, jobs, channels=(phone,), web=True) as app:
        put(app.home / "workspace" / "old" / "f.txt")
        await say(app, phone, "/run rm -rf /workspace/old")  # stays pending
        for receipt in _day_of_activity(clock.time()):
            app.ledger.append(receipt)
        clock.set(datetime.fromtimestamp(_next_eight(clock.time()) + 1, UTC))
        assert await scheduler(app).run_pending() == 1
        digest = next(c for _, c in phone.delivered if c.kind is CardKind.DIGEST)
        fields = dict(digest.fields)
        assert fields["Actions by tier"] == "T0 3, T1 1, T2 1"
        assert fields["Approvals"] == "decided: approved 1, denied 1, expired 1; pending: 1"
        assert fields["Failures"] == "1"
        assert [h.split()[-1] for h in fields["Health"].split(", ")] == ["degraded", "recovered"]
        assert fields["Jobs"] == "nightly missed 1"
        assert fields["Tokens"] == "1,500 ($0.0150)"
        assert fields["Ledger"].startswith("verified, ")
        assert "Missed while down: nightly" in digest.body
        assert "- tool_run/shell: exit code 1" in digest.body
        labels = [b.label for b in digest.buttons]
        assert labels == ["Open receipts", "Show failures", "Pending approvals"]
        link = digest.buttons[0].url
        assert link is not None
        async with aiohttp.ClientSession() as http:
            page = await http.get(link.replace(app.settings.public_url, app.web_url))
            assert page.status == 200  # the one-time link opens the receipts

        again = await tap(app, phone, digest, "Show failures")
        failures = [c for _, c in phone.delivered if c.title == "Failures since the last digest"]
        assert failures[0].body == "- tool_run/shell: exit code 1"
        assert again is not None
        await tap(app, phone, again, "Pending approvals")
        pending = [c for _, c in phone.delivered if c.title == "Pending approvals"]
        assert "rm -rf /workspace/old" in pending[0].body

        # /digest now covers only what happened since the scheduled one.
        await app.bus.publish(Inbound(phone.name, OWNER, CHAT, "/digest"))
        await app.bus.drained()
        latest = [c for _, c in phone.delivered if c.kind is CardKind.DIGEST][-1]
        assert latest.correlation_id != digest.correlation_id
        assert dict(latest.fields)["Actions by tier"] == "none"


async def test_digest_buttons_still_answer_after_a_restart(tmp_path: Path) -> None:
    clock = CalendarClock(time.time())
    phone = MemoryChannel()
    jobs, home = write_jobs(tmp_path / "jobs.yaml", JOBS), tmp_path / "home"
    async with scheduled_app(home, clock, jobs, channels=(phone,)) as app:
        for receipt in _day_of_activity(clock.time()):
            app.ledger.append(receipt)
        clock.set(datetime.fromtimestamp(_next_eight(clock.time()) + 1, UTC))
        assert await scheduler(app).run_pending() == 1
    digest = next(c for _, c in phone.delivered if c.kind is CardKind.DIGEST)

    async with scheduled_app(home, clock, jobs, channels=(phone,)) as app:
        again = await tap(app, phone, digest, "Show failures")
        failures = [c for _, c in phone.delivered if c.title == "Failures since the last digest"]
        assert failures[0].body == "- tool_run/shell: exit code 1"
        assert again is not None
        assert dict(again.fields)["Failures"] == "1"
        assert [b.label for b in again.buttons][-2:] == ["Show failures", "Pending approvals"]


class Flaky:
    """A channel that is down until told otherwise; message ids come from the platform."""

    name = "flaky"
    ids = itertools.count(1000)

    def __init__(self, down: bool) -> None:
        self.down = down
        self.shown: list[Card] = []

    @property
    def owner_chat_ids(self) -> tuple[str, ...]:
        return ("owner",)

    async def deliver(self, chat_id: str, card: Card) -> MessageRef:
        if self.down:
            raise DeliveryFailed("platform unreachable")
        self.shown.append(card)
        return MessageRef(self.name, chat_id, str(next(self.ids)))

    async def edit(self, ref: MessageRef, card: Card) -> None:
        if self.down:
            raise DeliveryFailed("platform unreachable")

    async def typing(self, chat_id: str) -> None:
        pass


async def test_digest_is_delivered_exactly_once_through_an_outage_and_restarts(
    tmp_path: Path,
) -> None:
    home, jobs = tmp_path / "home", write_jobs(tmp_path / "jobs.yaml", JOBS)
    clock = CalendarClock(time.time())
    due = _next_eight(clock.time())
    outage = Flaky(down=True)
    async with scheduled_app(home, clock, jobs, channels=(outage,), durable=True) as first:
        clock.set(datetime.fromtimestamp(due + 1, UTC))
        assert await scheduler(first).run_pending() == 1
        key = f"digest-daily_digest-{int(due)}:flaky:owner"
        state = await first.outbox.store.state_of(key)
        assert state == (OutboxState.PENDING, [])  # not delivered: no message id yet
    assert outage.shown == []
    for restart in range(2):  # back up, restarted twice: the queued digest goes out once
        phone = Flaky(down=False)
        async with scheduled_app(home, clock, jobs, channels=(phone,), durable=True) as app:
            for _ in range(100):
                if (await app.outbox.store.state_of(key) or (None,))[0] is OutboxState.DELIVERED:
                    break
                await asyncio.sleep(0.02)
            assert await scheduler(app).run_pending() == 0
            state = await app.outbox.store.state_of(key)
            assert state is not None
            assert state[0] is OutboxState.DELIVERED
            assert len(state[1]) == 1
        if restart == 0:
            assert [c.kind for c in phone.shown] == [CardKind.DIGEST]
        else:
            assert phone.shown == []
