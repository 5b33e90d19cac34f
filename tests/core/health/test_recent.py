"""/status reads health through HealthMonitor.recent(): a burst shares one run of the checks,
and a change is seen once the snapshot is older than `recent_for`, or at once when a check is
registered or readiness changes."""

from __future__ import annotations

import asyncio

from bot.app import Lancelot
from core.health.snapshot import HealthMonitor
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say


class Disk:
    """A check whose answer the test flips, counting how often it ran."""

    def __init__(self) -> None:
        self.full = False
        self.runs = 0

    async def check(self) -> str | None:
        self.runs += 1
        await asyncio.sleep(0.01)  # a real check awaits (a query, a Docker ping)
        return "disk: 12 MB free" if self.full else None


async def test_a_burst_of_status_runs_the_checks_once() -> None:
    disk = Disk()
    health = HealthMonitor(recent_for=60)
    health.register("disk", disk.check)
    snapshots = await asyncio.gather(*(health.recent() for _ in range(100)))
    assert disk.runs == 1
    assert all(s is snapshots[0] for s in snapshots)
    await health.recent()
    assert disk.runs == 1  # still recent


async def test_a_change_shows_once_the_snapshot_is_older_than_recent_for() -> None:
    disk = Disk()
    health = HealthMonitor(recent_for=0.2)
    health.register("disk", disk.check)
    health.mark_ready()
    assert (await health.recent()).degraded_reasons == ()
    disk.full = True
    await asyncio.sleep(0.25)
    snapshot = await health.recent()
    assert snapshot.degraded_reasons == ("disk: 12 MB free",)
    assert disk.runs == 2


async def test_registering_a_check_or_becoming_ready_refreshes_at_once() -> None:
    disk = Disk()
    health = HealthMonitor(recent_for=60)
    assert (await health.recent()).ready is False
    health.mark_ready()
    assert (await health.recent()).ready is True
    health.register("disk", disk.check)
    disk.full = True
    assert (await health.recent()).degraded_reasons == ("disk: 12 MB free",)


async def test_snapshot_for_the_web_is_always_fresh() -> None:
    disk = Disk()
    health = HealthMonitor(recent_for=60)
    health.register("disk", disk.check)
    health.mark_ready()
    await health.recent()
    disk.full = True
    assert (await health.snapshot()).degraded_reasons == ("disk: 12 MB free",)


async def test_status_shows_a_part_that_fails_after_an_earlier_status(
    app: Lancelot, phone: MemoryChannel
) -> None:
    app.health.mark_ready()
    first = await say(app, phone, "/status")

    async def ledger_down() -> str:
        return "ledger: disk full"

    app.health.register("ledger", ledger_down)
    second = await say(app, phone, "/status")
    assert "ledger: disk full" not in first.body
    assert "ledger: disk full" in second.body
    assert dict(second.fields)["Health"] == "degraded"
    # The receipt count follows the ledger without a query: the first /status's receipts count.
    assert int(dict(second.fields)["Receipts"]) > int(dict(first.fields)["Receipts"])
