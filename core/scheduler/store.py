"""scheduler.db: each job's next run and last outcome, and the history of runs.

A run is claimed by moving the job's next_run_at forward with a conditional update inside
one transaction that also records the run; whoever moves it first owns that run, so a fire,
a catch-up and a "Run now" racing each other (or two processes on the same home) never run
the same scheduled time twice.
"""

from __future__ import annotations

import asyncio
from dataclasses import astuple
from pathlib import Path

import aiosqlite

from core.errors import StorageError
from core.scheduler.model import ChatJobRow, JobState, Outcome, RunRecord
from core.storage.connections import open_db
from core.storage.versions import Schema


async def _add_task_columns(db: aiosqlite.Connection) -> None:
    """Step 3: a job may be a task the agent does (with the owner's approval, in the chat it
    was created from), not only a reminder. Columns already there (a home stamped from before
    versions) are left as they are."""
    async with db.execute("PRAGMA table_info(scheduler_chat_jobs)") as cur:
        present = {row[1] for row in await cur.fetchall()}
    defaults = {"kind": "reminder", "channel": "", "sender": "", "chat": ""}
    for column, default in defaults.items():
        if column not in present:
            await db.execute(
                f"ALTER TABLE scheduler_chat_jobs ADD COLUMN {column} TEXT NOT NULL"
                f" DEFAULT '{default}'"
            )


SCHEMA = Schema(
    "scheduler",
    (
        """
CREATE TABLE IF NOT EXISTS scheduler_jobs (
    name TEXT PRIMARY KEY,
    next_run_at REAL,
    paused INTEGER NOT NULL DEFAULT 0,
    last_run_at REAL,
    last_outcome TEXT,
    last_detail TEXT
);
CREATE TABLE IF NOT EXISTS scheduler_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job TEXT NOT NULL,
    scheduled_for REAL NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    trigger TEXT NOT NULL,
    outcome TEXT NOT NULL,
    gate TEXT,
    detail TEXT,
    missed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS scheduler_runs_by_time ON scheduler_runs(started_at);
CREATE TABLE IF NOT EXISTS scheduler_marks (
    name TEXT PRIMARY KEY,
    value REAL NOT NULL
);
""",
        """
CREATE TABLE IF NOT EXISTS scheduler_chat_jobs (
    name TEXT PRIMARY KEY,
    at REAL,
    cron TEXT,
    timezone TEXT NOT NULL,
    what TEXT NOT NULL,
    tier TEXT NOT NULL,
    created_at REAL NOT NULL
);
""",
        _add_task_columns,
    ),
)


class SchedulerStore:
    """The tables above, on a connection of their own (so a claim's transaction holds only
    the scheduler's statements)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._db: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()

    async def open(self) -> None:
        """Open (and create or upgrade) the database; StorageError names the cause."""
        self._db = await open_db(self._path, SCHEMA, "scheduler database")

    async def close(self) -> None:
        """Close the connection."""
        if self._db is not None:
            db, self._db = self._db, None
            await db.close()

    @property
    def db(self) -> aiosqlite.Connection:
        """The open connection."""
        if self._db is None:
            raise StorageError("the scheduler database is not open")
        return self._db

    async def job(self, name: str) -> JobState | None:
        """One job's row."""
        async with self.db.execute(
            "SELECT name, next_run_at, paused, last_run_at, last_outcome, last_detail"
            " FROM scheduler_jobs WHERE name = ?",
            (name,),
        ) as cur:
            row = await cur.fetchone()
        return JobState(row[0], row[1], bool(row[2]), *row[3:]) if row else None

    async def ensure(self, name: str, next_run_at: float | None) -> JobState:
        """The job's row, created with `next_run_at` if new."""
        async with self._lock:
            await self.db.execute(
                "INSERT INTO scheduler_jobs (name, next_run_at) VALUES (?, ?)"
                " ON CONFLICT(name) DO NOTHING",
                (name, next_run_at),
            )
        found = await self.job(name)
        assert found is not None
        return found

    async def set_next(self, name: str, next_run_at: float | None) -> None:
        """Schedule (or unschedule) a job without claiming a run."""
        async with self._lock:
            await self.db.execute(
                "UPDATE scheduler_jobs SET next_run_at = ? WHERE name = ?", (next_run_at, name)
            )

    async def set_paused(self, name: str, paused: bool, next_run_at: float | None) -> None:
        """Pause (next run cleared) or resume (next run set)."""
        async with self._lock:
            await self.db.execute(
                "UPDATE scheduler_jobs SET paused = ?, next_run_at = ? WHERE name = ?",
                (int(paused), next_run_at, name),
            )

    async def claim(
        self,
        name: str,
        expected: float | None,
        new_next: float | None,
        *,
        scheduled_for: float,
        now: float,
        trigger: str,
        outcome: Outcome = Outcome.RUNNING,
        gate: str | None = None,
        detail: str | None = None,
        missed: int = 0,
    ) -> int | None:
        """Move next_run_at from `expected` to `new_next` and record the run, atomically.
        Returns the run id, or None when someone else moved it first. `expected` None claims
        a manual run (the schedule stays as it is)."""
        async with self._lock:
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                if expected is not None:
                    cur = await self.db.execute(
                        "UPDATE scheduler_jobs SET next_run_at = ?"
                        " WHERE name = ? AND next_run_at = ?",
                        (new_next, name, expected),
                    )
                    if cur.rowcount != 1:
                        await self.db.execute("ROLLBACK")
                        return None
                cur = await self.db.execute(
                    "INSERT INTO scheduler_runs (job, scheduled_for, started_at, trigger,"
                    " outcome, gate, detail, missed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (name, scheduled_for, now, trigger, outcome.value, gate, detail, missed),
                )
                run_id = cur.lastrowid
                if outcome is not Outcome.RUNNING:
                    await self._set_last(name, now, outcome, detail or gate)
                await self.db.execute("COMMIT")
            except BaseException:
                await self.db.execute("ROLLBACK")
                raise
        return run_id

    async def finish(
        self, run_id: int, name: str, now: float, outcome: Outcome, detail: str
    ) -> None:
        """Record how a claimed run ended."""
        async with self._lock:
            await self.db.execute(
                "UPDATE scheduler_runs SET finished_at = ?, outcome = ?, detail = ? WHERE id = ?",
                (now, outcome.value, detail[:500], run_id),
            )
            await self._set_last(name, now, outcome, detail)

    async def _set_last(self, name: str, now: float, outcome: Outcome, detail: str | None) -> None:
        await self.db.execute(
            "UPDATE scheduler_jobs SET last_run_at = ?, last_outcome = ?, last_detail = ?"
            " WHERE name = ?",
            (now, outcome.value, (detail or "")[:500], name),
        )

    async def interrupted(self, now: float) -> int:
        """Runs a crash left 'running' are marked interrupted (they are not run again)."""
        cur = await self.db.execute(
            "UPDATE scheduler_runs SET outcome = 'interrupted', finished_at = ?"
            " WHERE outcome = 'running'",
            (now,),
        )
        return cur.rowcount

    async def take_interrupted(self, jobs: list[str]) -> list[RunRecord]:
        """Runs of `jobs` a stop cut short and nobody has taken up yet; each is marked
        taken (returned once)."""
        if not jobs:
            return []
        marks = ",".join("?" * len(jobs))
        async with self._lock:
            async with self.db.execute(
                "SELECT id, job, scheduled_for, started_at, finished_at, trigger, outcome, gate,"
                f" detail, missed FROM scheduler_runs WHERE outcome = 'interrupted'"
                f" AND detail IS NULL AND job IN ({marks}) ORDER BY id",
                jobs,
            ) as cur:
                found = [RunRecord(*row) for row in await cur.fetchall()]
            await self.db.executemany(
                "UPDATE scheduler_runs SET detail = 'taken up after a restart' WHERE id = ?",
                [(run.id,) for run in found],
            )
        return found

    async def runs_since(self, since: float) -> list[RunRecord]:
        """History from `since` on, oldest first."""
        async with self.db.execute(
            "SELECT id, job, scheduled_for, started_at, finished_at, trigger, outcome, gate,"
            " detail, missed FROM scheduler_runs WHERE started_at >= ? ORDER BY id",
            (since,),
        ) as cur:
            return [RunRecord(*row) for row in await cur.fetchall()]

    async def prune_runs(self, older_than: float) -> int:
        """Forget history that started before `older_than` (epoch seconds)."""
        cur = await self.db.execute(
            "DELETE FROM scheduler_runs WHERE started_at < ? AND outcome != 'running'",
            (older_than,),
        )
        return cur.rowcount

    async def mark(self, name: str) -> float | None:
        """A remembered timestamp (e.g. when the last digest covered up to)."""
        async with self.db.execute(
            "SELECT value FROM scheduler_marks WHERE name = ?", (name,)
        ) as cur:
            row = await cur.fetchone()
        return float(row[0]) if row else None

    async def set_mark(self, name: str, value: float) -> None:
        """Remember a timestamp."""
        await self.db.execute(
            "INSERT INTO scheduler_marks (name, value) VALUES (?, ?)"
            " ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            (name, value),
        )

    async def add_chat_job(self, row: ChatJobRow, next_run_at: float | None) -> bool:
        """Keep a job created from chat, scheduled for `next_run_at`, in one transaction;
        False when a job of that name exists."""
        async with self._lock:
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                cur = await self.db.execute(
                    "INSERT INTO scheduler_chat_jobs (name, at, cron, timezone, what, tier,"
                    " created_at, kind, channel, sender, chat)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING",
                    astuple(row),  # the columns in the order ChatJobRow declares them
                )
                if cur.rowcount == 1:
                    await self.db.execute(
                        "INSERT INTO scheduler_jobs (name, next_run_at) VALUES (?, ?)"
                        " ON CONFLICT(name) DO UPDATE SET next_run_at = excluded.next_run_at,"
                        " paused = 0",
                        (row.name, next_run_at),
                    )
                await self.db.execute("COMMIT")
            except BaseException:
                await self.db.execute("ROLLBACK")
                raise
        return cur.rowcount == 1

    async def chat_jobs(self) -> list[ChatJobRow]:
        """Every job created from chat, oldest first."""
        async with self.db.execute(
            "SELECT name, at, cron, timezone, what, tier, created_at, kind, channel, sender,"
            " chat FROM scheduler_chat_jobs ORDER BY created_at, name"
        ) as cur:
            return [ChatJobRow(*row) for row in await cur.fetchall()]

    async def delete_chat_job(self, name: str) -> bool:
        """Forget a job created from chat and its schedule (its run history stays)."""
        async with self._lock:
            cur = await self.db.execute("DELETE FROM scheduler_chat_jobs WHERE name = ?", (name,))
            await self.db.execute("DELETE FROM scheduler_jobs WHERE name = ?", (name,))
        return cur.rowcount == 1
