"""Every database under LANCELOT_HOME carries its schema version: a fresh home gets them, a
home made before versions existed is stamped and keeps its data, and a home from a newer
Lancelot is refused with one line naming the file."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path

import pytest

from core.delivery import inbox
from core.delivery import store as outbox
from core.errors import StorageError
from core.governance import approvals, crusader
from core.health import alert_state
from core.llm import spend, usage
from core.memory import schema as memory_schema
from core.onboarding import store as onboarding
from core.receipts import schema as ledger
from core.receipts.base import ReceiptQuery
from core.scheduler import store as scheduler_store
from core.security import tokens, viewer_access
from core.skills import proposals, registry
from core.storage.versions import LAYOUT, Schema
from tests.bot.test_cli import env_for, lancelot
from tests.fakes.calendar import CalendarClock
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say
from tests.fakes.scheduled_app import scheduled_app, write_jobs
from tests.fakes.workspace import put

STATE_DB = (
    tokens.SCHEMA,
    viewer_access.SCHEMA,
    outbox.SCHEMA,
    inbox.SCHEMA,
    approvals.SCHEMA,
    crusader.SCHEMA,
    usage.SCHEMA,
    spend.SCHEMA,
    registry.SCHEMA,
    proposals.SCHEMA,
    alert_state.SCHEMA,
    onboarding.SCHEMA,
)
FILES = {
    "ledger.db": ledger.SCHEMA,
    "ledger-search.db": ledger.SEARCH,
    "scheduler.db": scheduler_store.SCHEMA,
    "memory.db": memory_schema.SCHEMA,
}

# sha256 (first 16 hex) of each released step. A released step never changes: existing homes
# have run it, and would never run the new text. Change a table with a new step instead.
RELEASED = {
    "action_tokens": ["83236315094f8c93", "449609ceaf6cfcfc"],
    "viewer_links": ["1f61c560e1063b04"],
    "outbox": ["cba2731613d5e12c"],
    "inbox": ["60c53d4a6998205d"],
    "approvals": ["7ad4386357b60bb7", "26b17e90a69ff0d5"],
    "crusader": ["0adec1ee6a20c0c7"],
    "llm_usage": ["ddad202e62479b51"],
    "llm_spend": ["03cd2dd063ddd2d2"],
    "health_alerts": ["6ec41ffb19875798"],
    "skills": ["4f94f98c1683ddfe"],
    "skill_proposals": ["66d1270fa8fac9c7"],
    "onboarding": ["1516d8131ea40bfa"],
    "scheduler": ["c431f7a7d468fd6b", "20dc5d7a3079eb6e", "dbb06b5dace40dfa"],
    "ledger": ["d786dbb1341b0d89"],
    "memory": ["7f0594a71383aef3", "5273ce959b7f4747"],
    "search": ["ef9c5b043d0b4dcb"],
}
# Undoes, in state.db, each step after a table's first (so its version 1 stands again).
VERSION_1 = (
    "DROP INDEX approvals_by_request",
    "ALTER TABLE approvals DROP COLUMN request_key",
    "ALTER TABLE action_tokens DROP COLUMN used_for",
)
JOBS = """
  memory_cleanup:
    run: builtin:memory_cleanup
    cron: "0 3 * * *"
"""


def _digest(step: object) -> str:
    text = step if isinstance(step, str) else getattr(step, "__qualname__", repr(step))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _versions(home: Path) -> dict[str, int]:
    """Every version in the home: state.db's owners, and each file's user_version."""
    found: dict[str, int] = {}
    for name in ("state.db", *FILES):
        db = sqlite3.connect(home / name)
        try:
            found[name] = db.execute("PRAGMA user_version").fetchone()[0]
            if name == "state.db":
                found.update(db.execute("SELECT owner, version FROM schema_versions"))
        finally:
            db.close()
    return found


def _current() -> dict[str, int]:
    return {
        "state.db": LAYOUT.version,
        **{s.owner: s.version for s in STATE_DB},
        **{name: s.version for name, s in FILES.items()},
    }


def _sql(home: Path, name: str, *statements: str) -> None:
    db = sqlite3.connect(home / name, isolation_level=None)
    try:
        for statement in statements:
            db.execute(statement)
    finally:
        db.close()


def test_released_steps_are_frozen_and_owners_unique() -> None:
    schemas: list[Schema] = [*STATE_DB, *FILES.values()]
    assert {s.owner: [_digest(step) for step in s.steps] for s in schemas} == RELEASED
    assert len({s.owner for s in STATE_DB}) == len(STATE_DB)  # one row each in schema_versions


async def test_a_fresh_home_gets_every_version(tmp_path: Path) -> None:
    home = tmp_path / "home"
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(home, CalendarClock(time.time()), jobs):
        pass
    assert _versions(home) == _current()


async def test_a_home_from_before_versions_is_stamped_and_keeps_its_data(tmp_path: Path) -> None:
    home, phone = tmp_path / "home", MemoryChannel()
    clock = CalendarClock(time.time())
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(home, clock, jobs, channels=(phone,)) as app:
        put(app.home / "workspace" / "old" / "f.txt")
        await say(app, phone, "/run rm -rf /workspace/old")  # an approval left pending
        await say(app, phone, "/crusader on")
        receipts = await app.ledger.count()
    # What the code before versions left: the tables as version 1 made them, no versions.
    _sql(
        home,
        "state.db",
        "DROP TABLE schema_versions",
        "PRAGMA user_version = 0",
        *VERSION_1,
    )
    for name in FILES:
        _sql(home, name, "PRAGMA user_version = 0")

    async with scheduled_app(home, clock, jobs, channels=(phone,)) as app:
        assert app.status_fields["Crusader"]().startswith("on, ")
        card = await say(app, phone, "/approvals")  # the pending one, sent again
        assert "rm -rf /workspace/old" in f"{card.title} {card.body}"
        assert await app.ledger.count() >= receipts
        assert (await app.ledger.verify()).ok
    assert _versions(home) == _current()


@pytest.mark.parametrize(
    ("name", "statement", "named"),
    [
        ("state.db", "UPDATE schema_versions SET version = 99 WHERE owner = 'outbox'", "outbox"),
        ("state.db", "PRAGMA user_version = 99", "state.db layout"),
        ("ledger.db", "PRAGMA user_version = 99", "ledger"),
        ("scheduler.db", "PRAGMA user_version = 99", "scheduler"),
    ],
)
async def test_a_home_from_a_newer_lancelot_is_refused_in_one_line(
    tmp_path: Path, name: str, statement: str, named: str
) -> None:
    home = tmp_path / "home"
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(home, CalendarClock(time.time()), jobs):
        pass
    _sql(home, name, statement)
    with pytest.raises(StorageError) as caught:
        async with scheduled_app(home, CalendarClock(time.time()), jobs):
            pass
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{home / name}: the {named} schema is version 99, newer")


def test_lancelot_says_which_file_is_too_new(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _sql(home, "ledger.db", "PRAGMA user_version = 99")
    result = lancelot("receipts", "verify", env=env_for(home))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert f"{home / 'ledger.db'}: the ledger schema is version 99" in result.stderr
    assert "Traceback" not in result.stderr


async def test_a_search_index_from_a_newer_lancelot_is_rebuilt_not_refused(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(home, CalendarClock(time.time()), jobs) as app:
        before = await app.ledger.count()
    _sql(home, "ledger-search.db", "PRAGMA user_version = 99")
    async with scheduled_app(home, CalendarClock(time.time()), jobs) as app:
        page = await app.ledger.page(ReceiptQuery(text="startup", limit=50))
        assert len(page.receipts) >= 1  # the index was rebuilt from the ledger
        assert await app.ledger.count() > before
    assert _versions(home)["ledger-search.db"] == ledger.SEARCH.version
