"""The supervisor keeps background tasks, says which loop died and why, and stops the rest."""

from __future__ import annotations

import asyncio

import pytest

from core.health.snapshot import HealthMonitor
from core.runtime.tasks import Supervisor


async def _forever() -> None:
    await asyncio.Event().wait()


async def _crash(message: str = "the loop broke") -> None:
    await asyncio.sleep(0)
    raise RuntimeError(message)


async def test_a_loop_that_raises_is_logged_with_its_traceback_and_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tasks = Supervisor()
    tasks.spawn(_forever(), name="quiet-loop")
    crashed = tasks.spawn(_crash(), name="busy-loop")
    await asyncio.wait([crashed])
    await asyncio.sleep(0)  # done-callbacks run on the next turn of the loop
    assert tasks.died() == ("busy-loop",)
    assert await tasks.health() == "background task stopped: busy-loop (RuntimeError)"
    assert "background task busy-loop died" in caplog.text
    assert "Traceback" in caplog.text
    assert "the loop broke" in caplog.text
    await tasks.aclose()


async def test_health_reports_dead_loops_through_the_health_monitor() -> None:
    tasks = Supervisor()
    monitor = HealthMonitor(interval=3600)
    monitor.register("tasks", tasks.health)
    monitor.mark_ready()
    assert (await monitor.check()).ready
    await asyncio.wait([tasks.spawn(_crash(), name="writer")])
    await asyncio.wait([tasks.spawn(_crash(), name="reader")])
    await asyncio.sleep(0)
    snapshot = await monitor.check()
    assert not snapshot.ready
    assert snapshot.degraded_reasons == (
        "background tasks stopped: writer (RuntimeError), reader (RuntimeError)",
    )


async def test_a_loop_started_again_is_no_longer_reported() -> None:
    tasks = Supervisor()
    await asyncio.wait([tasks.spawn(_crash(), name="poller")])
    await asyncio.sleep(0)
    assert tasks.died() == ("poller",)
    tasks.spawn(_forever(), name="poller")
    assert tasks.died() == ()
    assert await tasks.health() is None
    await tasks.aclose()


async def test_a_short_task_that_fails_is_logged_but_not_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tasks = Supervisor()
    await asyncio.wait([tasks.spawn(_crash(), name="tg-answer", report=False)])
    await asyncio.sleep(0)
    assert tasks.died() == ()
    assert "background task tg-answer died" in caplog.text


async def test_a_private_failure_logs_its_type_and_frames_but_not_its_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "sk-" + "y" * 40
    tasks = Supervisor()
    await asyncio.wait([tasks.spawn(_crash(secret), name="ledger-writer", private=True)])
    await asyncio.sleep(0)
    assert tasks.died() == ("ledger-writer",)
    assert "RuntimeError" in caplog.text
    assert "_crash" in caplog.text  # the frames
    assert secret not in caplog.text


async def test_a_loop_retrying_after_an_error_is_named_until_it_recovers_or_dies() -> None:
    tasks = Supervisor()
    gate = asyncio.Event()

    async def struggling() -> None:
        tasks.failing("expiry", "state.db: database is locked")
        await gate.wait()
        raise RuntimeError("gave up")

    loop = tasks.spawn(struggling(), name="expiry")
    await asyncio.sleep(0)
    assert await tasks.health() == "retrying after an error: expiry (state.db: database is locked)"
    tasks.recovered("expiry")
    assert await tasks.health() is None
    tasks.failing("expiry", "state.db: disk I/O error")
    gate.set()
    await asyncio.wait([loop])
    await asyncio.sleep(0)
    assert await tasks.health() == "background task stopped: expiry (RuntimeError)"


async def test_ending_normally_or_by_cancellation_is_not_a_death(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tasks = Supervisor()
    done = tasks.spawn(asyncio.sleep(0), name="one-off")
    cancelled = tasks.spawn(_forever(), name="stopped")
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.wait([done, cancelled])
    await asyncio.sleep(0)
    assert tasks.died() == ()
    assert tasks.running == 0
    assert caplog.records == []


async def test_aclose_cancels_what_is_still_running_and_waits_for_it() -> None:
    tasks = Supervisor()
    cleaned_up = asyncio.Event()

    async def loop() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0.01)  # cleanup that takes a moment
            cleaned_up.set()

    running = [tasks.spawn(loop(), name=f"loop-{n}") for n in range(3)]
    await asyncio.sleep(0)
    assert tasks.running == 3
    await tasks.aclose()
    assert all(task.cancelled() for task in running)
    assert cleaned_up.is_set()
    assert tasks.running == 0
    assert tasks.died() == ()


async def test_aclose_does_not_swallow_its_own_cancellation() -> None:
    tasks = Supervisor()

    async def stubborn() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(3600)  # ignores the first cancel while cleaning up

    tasks.spawn(stubborn(), name="stubborn")
    await asyncio.sleep(0)
    closing = asyncio.create_task(tasks.aclose())
    await asyncio.sleep(0.01)
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    await tasks.aclose()  # a second cancel ends the cleanup


async def test_spawn_keeps_the_task_referenced_until_it_ends() -> None:
    tasks = Supervisor()
    finished = asyncio.Event()

    async def work() -> None:
        await asyncio.sleep(0.01)
        finished.set()

    tasks.spawn(work(), name="unreferenced")  # the caller keeps nothing
    assert tasks.running == 1
    await asyncio.wait_for(finished.wait(), 5)
    await asyncio.sleep(0)
    assert tasks.running == 0
