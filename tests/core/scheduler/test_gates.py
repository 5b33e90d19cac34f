"""Gates before every run: onboarding, the local model, owner approval (the Soul's scheduling
boundary). Each refusal leaves a scheduled_job_skipped receipt naming the gate."""

from __future__ import annotations

import json
from pathlib import Path

from core.events import CardKind
from core.scheduler import JobContext
from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap
from tests.fakes.scheduled_app import receipts, scheduled_app, scheduler, write_jobs

JOBS = """
  thinker:
    run: builtin:count
    every_seconds: 60
    needs_local_model: true
  mover:
    run: builtin:count
    every_seconds: 60
    tier: T2
  plain:
    run: builtin:count
    every_seconds: 60
  rotation:
    run: builtin:count
    every_seconds: 60
    requires_approval: true
    tier: T3
"""


def _gates(found: list[object]) -> dict[str, str]:
    return {r.action_name: json.loads(r.metadata)["gate"] for r in found}  # type: ignore[attr-defined]


async def test_each_gate_skips_with_a_receipt_and_approval_runs_it(tmp_path: Path) -> None:
    clock = CalendarClock(utc(2026, 11, 23, 9, 0, 30))
    ran: list[tuple[str, bool]] = []

    async def count(ctx: JobContext) -> str:
        ran.append((ctx.job, ctx.approved))
        return "counted"

    phone = MemoryChannel()
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(
        tmp_path / "home", clock, jobs, channels=(phone,), runners={"builtin:count": count}
    ) as app:
        clock.advance(60)
        assert await scheduler(app).run_pending() == 4
        assert ran == [("plain", False)]
        skipped = await receipts(app, "scheduled_job_skipped")
        assert _gates(skipped) == {
            "thinker": "local_model",  # no local model check is registered
            "mover": "owner_approval",  # T2 is above the Soul's max_tier_without_approval (T1)
            "rotation": "owner_approval",
        }
        # Each gated run asked the owner with an approval card.
        asks = [c for _, c in phone.delivered if c.kind is CardKind.APPROVAL]
        assert sorted(c.title for c in asks) == ["Run mover?", "Run rotation?"]
        clock.advance(60)  # due again, still undecided: skipped again, but no second card
        await scheduler(app).run_pending()
        assert len([c for _, c in phone.delivered if c.kind is CardKind.APPROVAL]) == 2
        rotation = next(c for c in asks if c.title == "Run rotation?")
        edited = await tap(app, phone, rotation, "Approve")
        assert edited is not None
        assert edited.title == "rotation: approved by owner"
        assert ("rotation", True) in ran
        mover = next(c for c in asks if c.title == "Run mover?")
        denied = await tap(app, phone, mover, "Deny")
        assert denied is not None
        assert denied.title == "mover: denied by owner"
        assert ("mover", True) not in ran
        done = await receipts(app, "scheduled_job_run")
        approved = [json.loads(r.metadata)["approved"] for r in done if r.action_name == "rotation"]
        assert approved == [True]

        # A healthy local model opens its gate; a sick one closes it again.
        healthy: list[str | None] = [None]

        async def local_model() -> str | None:
            return healthy[0]

        app.health.register("local_model", local_model)
        clock.advance(60)
        await scheduler(app).run_pending()
        assert ("thinker", False) in ran
        healthy[0] = "local model: not loaded"
        clock.advance(60)
        await scheduler(app).run_pending()
        last = (await receipts(app, "scheduled_job_skipped"))[-4:]
        assert any(r.action_name == "thinker" and "not healthy" in r.outputs for r in last)


async def test_nothing_runs_before_onboarding_is_ready(tmp_path: Path) -> None:
    clock = CalendarClock(utc(2026, 11, 23, 9, 0, 30))
    ran: list[str] = []

    async def count(ctx: JobContext) -> str:
        ran.append(ctx.job)
        return "counted"

    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    no_soul = {"FEATURE_SOUL": "0"}
    async with scheduled_app(
        tmp_path / "home", clock, jobs, env=no_soul, runners={"builtin:count": count}
    ) as app:
        assert app.governance is None
        snapshot = await app.health.snapshot()
        assert snapshot.onboarding_state == "SOUL_NOT_LOADED"
        clock.advance(60)
        await scheduler(app).run_pending()
        assert ran == []
        skipped = await receipts(app, "scheduled_job_skipped")
        assert set(_gates(skipped).values()) == {"onboarding"}


async def test_work_waits_while_onboarding_is_under_way(tmp_path: Path) -> None:
    """Not started (set up by hand): jobs run. Begun: they wait, with a receipt naming the
    step. Done (or skipped): they run again."""
    clock = CalendarClock(utc(2026, 11, 23, 9, 0, 30))
    ran: list[str] = []

    async def count(ctx: JobContext) -> str:
        ran.append(ctx.job)
        return "counted"

    phone = MemoryChannel()
    jobs = write_jobs(
        tmp_path / "jobs.yaml", "  plain:\n    run: builtin:count\n    every_seconds: 60\n"
    )
    async with scheduled_app(
        tmp_path / "home", clock, jobs, channels=(phone,), runners={"builtin:count": count}
    ) as app:
        clock.advance(60)
        await scheduler(app).run_pending()
        assert ran == ["plain"]
        await say(app, phone, "/start")
        clock.advance(60)
        await scheduler(app).run_pending()
        assert ran == ["plain"]
        [skipped] = await receipts(app, "scheduled_job_skipped")
        assert json.loads(skipped.metadata)["gate"] == "onboarding"
        assert "step 1 of 4 (your name)" in skipped.outputs
        await say(app, phone, "skip")
        clock.advance(60)
        await scheduler(app).run_pending()
        assert ran == ["plain", "plain"]
