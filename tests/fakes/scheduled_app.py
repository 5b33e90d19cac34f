"""Lancelot assembled with a calendar clock and a jobs file of the test's own, as a phone
user would have it (a channel attached, startup finished, the scheduler caught up)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from bot.app import Lancelot, assemble
from core.channel import Channel
from core.config import load_settings
from core.delivery.outbox import DeliveryPolicy
from core.features import FeatureFlags
from core.llm.types import ModelRouter
from core.receipts.base import ReceiptQuery
from core.receipts.model import StoredReceipt
from core.scheduler import JobRunner, Scheduler
from tests.fakes.calendar import CalendarClock
from tests.fakes.channel import MemoryChannel

QUICK = DeliveryPolicy(
    global_rate=0, group_rate=0, backoff_base=0.05, backoff_cap=0.2, first_attempt_wait=2
)


def write_jobs(path: Path, text: str) -> Path:
    """A scheduler.yaml with `text` under `jobs:` (already indented)."""
    path.write_text("timezone: UTC\njobs:\n" + text)
    return path


@contextlib.asynccontextmanager
async def scheduled_app(
    home: Path,
    clock: CalendarClock,
    jobs: Path,
    *,
    channels: tuple[Channel, ...] = (),
    durable: bool = False,
    web: bool = False,
    env: dict[str, str] | None = None,
    runners: dict[str, JobRunner] | None = None,
    models: ModelRouter | None = None,
) -> AsyncIterator[Lancelot]:
    """Start Lancelot on `home` with extra job code (`runners`, by target) and, if given,
    the agent's model router; the scheduler has caught up (and its catch-up runs finished)
    when this yields."""
    settings = load_settings(
        environ={
            "LANCELOT_HOME": str(home),
            "LANCELOT_SCHEDULER_JOBS_FILE": str(jobs),
            "LANCELOT_WEB_PORT": "0",
            **(env or {}),
        }
    )
    # The switches are `env` alone, not this process's environment; the local model is off
    # unless `env` turns it on, as in every other test (tests/conftest.py).
    features = FeatureFlags({"FEATURE_LOCAL_MODEL": "false", **(env or {})})
    async with assemble(
        settings, features=features, web=web, clock=clock, delivery=QUICK, models=models
    ) as app:
        for channel in channels or (MemoryChannel(),):
            await app.attach(channel, durable=durable)
        for target, runner in (runners or {}).items():
            scheduler(app).register(target, runner)
        app.health.mark_ready()
        await scheduler(app).started.wait()
        await scheduler(app).idle()
        yield app


def scheduler(app: Lancelot) -> Scheduler:
    """The app's scheduler (always there once assembled)."""
    assert app.scheduler is not None
    return app.scheduler


async def receipts(app: Lancelot, action_type: str) -> list[StoredReceipt]:
    """Receipts of one type, oldest first."""
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type=action_type, limit=500))
    return list(reversed(page.receipts))
