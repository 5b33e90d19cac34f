"""effects.db: the dry runs waiting for a decision, the changes applied, the backups each
change holds. This module alone reads and writes it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import aiosqlite

from core.errors import StorageError
from core.storage.connections import open_db
from core.storage.versions import Schema
from core.tools.base import ToolResult
from core.tools.effects.effectset import EffectSet
from core.tools.effects.records import Change, DryRun

SCHEMA = Schema(
    "effects",
    (
        """
CREATE TABLE IF NOT EXISTS dry_runs (
    id TEXT PRIMARY KEY,
    command TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    digest TEXT NOT NULL,
    effects TEXT NOT NULL,
    exit_code INTEGER NOT NULL,
    output TEXT NOT NULL,
    truncated INTEGER NOT NULL,
    state TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS dry_runs_by_state ON dry_runs(state, expires_at);
CREATE TABLE IF NOT EXISTS changes (
    id TEXT PRIMARY KEY,
    command TEXT NOT NULL,
    applied_at REAL NOT NULL,
    undo_until REAL NOT NULL,
    digest TEXT NOT NULL,
    summary TEXT NOT NULL,
    effects TEXT NOT NULL,
    state TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS changes_by_time ON changes(applied_at);
CREATE TABLE IF NOT EXISTS change_objects (
    change_id TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    PRIMARY KEY (change_id, sha256)
);
CREATE INDEX IF NOT EXISTS change_objects_by_sha ON change_objects(sha256);
""",
    ),
)


def _dump(effects: EffectSet) -> str:
    # ASCII: a file name that is not UTF-8 holds lone surrogates, which SQLite cannot take.
    return json.dumps(effects.to_dict(), separators=(",", ":"))


def _load(text: str) -> EffectSet:
    data: dict[str, Any] = json.loads(text)
    return EffectSet.from_dict(data)


class EffectJournal:
    """The tables above on a connection of their own, in LANCELOT_HOME/effects.db."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._db: aiosqlite.Connection | None = None

    async def open(self) -> None:
        """Open (and create or upgrade) the database; StorageError names the cause."""
        self._db = await open_db(self._path, SCHEMA, "effects database")

    async def close(self) -> None:
        """Close the connection."""
        if self._db is not None:
            db, self._db = self._db, None
            await db.close()

    @property
    def db(self) -> aiosqlite.Connection:
        """The open connection."""
        if self._db is None:
            raise StorageError("the effects database is not open")
        return self._db

    async def _run(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        async with self.db.execute(sql, params) as cur:
            return cur.rowcount

    async def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        async with self.db.execute(sql, params) as cur:
            return list(await cur.fetchall())

    # --- dry runs ---

    async def add_dry_run(self, run: DryRun) -> None:
        """Keep a dry run that waits for a decision."""
        await self._run(
            "INSERT INTO dry_runs (id, command, created_at, expires_at, digest, effects,"
            " exit_code, output, truncated, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.id,
                run.command,
                run.created_at,
                run.expires_at,
                run.effects.digest,
                _dump(run.effects),
                run.result.exit_code,
                run.result.output,
                int(run.result.truncated),
                run.state,
            ),
        )

    async def dry_run(self, dry_run_id: str) -> DryRun | None:
        """The dry run with this id, if kept."""
        rows = await self._rows(
            "SELECT id, command, created_at, expires_at, effects, exit_code, output, truncated,"
            " state FROM dry_runs WHERE id = ?",
            (dry_run_id,),
        )
        if not rows:
            return None
        (id_, command, created, expires, effects, code, output, cut, state) = rows[0]
        result = ToolResult(int(code), str(output), bool(cut))
        return DryRun(id_, command, created, expires, result, _load(effects), state)

    async def settle_dry_run(self, dry_run_id: str, state: str) -> bool:
        """Move a pending dry run to `state`; False if it was no longer pending."""
        sql = "UPDATE dry_runs SET state = ? WHERE id = ? AND state = 'pending'"
        return await self._run(sql, (state, dry_run_id)) == 1

    async def pending_dry_runs(self) -> set[str]:
        """The ids of dry runs still waiting."""
        rows = await self._rows("SELECT id FROM dry_runs WHERE state = 'pending'")
        return {str(row[0]) for row in rows}

    async def expire_dry_runs(self, now: float) -> list[str]:
        """Mark pending dry runs past their time expired; their ids."""
        sql = "SELECT id FROM dry_runs WHERE state = 'pending' AND expires_at <= ?"
        ids = [str(row[0]) for row in await self._rows(sql, (now,))]
        for dry_run_id in ids:
            await self.settle_dry_run(dry_run_id, "expired")
        return ids

    # --- changes and their backups ---

    async def begin_change(self, change: Change, objects: dict[str, int]) -> None:
        """Record a change about to be committed, with the backups it holds (state applying,
        so a crash in the middle still leaves an undo to try)."""
        await self._run("BEGIN IMMEDIATE")
        try:
            await self._insert_change(change)
            async with self.db.executemany(
                "INSERT OR IGNORE INTO change_objects (change_id, sha256, size) VALUES (?, ?, ?)",
                [(change.id, sha, size) for sha, size in objects.items()],
            ):
                pass
            await self._run("COMMIT")
        except BaseException:
            await self._run("ROLLBACK")
            raise

    async def _insert_change(self, change: Change) -> None:
        await self._run(
            "INSERT INTO changes (id, command, applied_at, undo_until, digest, summary, effects,"
            " state) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                change.id,
                change.command,
                change.applied_at,
                change.undo_until,
                change.effects.digest,
                change.summary,
                _dump(change.effects),
                change.state,
            ),
        )

    async def finish_change(self, change_id: str, written: EffectSet) -> None:
        """The change is committed: keep the states as written; its dry run is applied."""
        await self._run("BEGIN IMMEDIATE")
        try:
            await self._run(
                "UPDATE changes SET effects = ?, state = 'applied' WHERE id = ?",
                (_dump(written), change_id),
            )
            await self.settle_dry_run(change_id, "applied")
            await self._run("COMMIT")
        except BaseException:
            await self._run("ROLLBACK")
            raise

    async def change(self, change_id: str) -> Change | None:
        """The change with this id, if kept."""
        rows = await self._rows(
            "SELECT id, command, applied_at, undo_until, effects, state FROM changes WHERE id = ?",
            (change_id,),
        )
        return _change(rows[0]) if rows else None

    async def recent_changes(self, now: float, limit: int) -> list[Change]:
        """Changes that can still be undone, newest first."""
        rows = await self._rows(
            "SELECT id, command, applied_at, undo_until, effects, state FROM changes"
            " WHERE state IN ('applied', 'applying') AND undo_until > ?"
            " ORDER BY applied_at DESC LIMIT ?",
            (now, limit),
        )
        return [_change(row) for row in rows]

    async def settle_change(self, change_id: str, state: str) -> list[str]:
        """Move an applied change to `state` (undone, expired) and let go of its backups; the
        hashes no other change holds (their files may go)."""
        await self._run("BEGIN IMMEDIATE")
        try:
            await self._run("UPDATE changes SET state = ? WHERE id = ?", (state, change_id))
            orphans = await self._release(change_id)
            await self._run("COMMIT")
        except BaseException:
            await self._run("ROLLBACK")
            raise
        return orphans

    async def _release(self, change_id: str) -> list[str]:
        held = [
            str(row[0])
            for row in await self._rows(
                "SELECT sha256 FROM change_objects WHERE change_id = ?", (change_id,)
            )
        ]
        await self._run("DELETE FROM change_objects WHERE change_id = ?", (change_id,))
        orphans = []
        for sha in held:
            rows = await self._rows("SELECT 1 FROM change_objects WHERE sha256 = ? LIMIT 1", (sha,))
            if not rows:
                orphans.append(sha)
        return orphans

    async def interrupted_changes(self) -> list[str]:
        """Changes a crash left in the middle of their commit."""
        rows = await self._rows("SELECT id FROM changes WHERE state = 'applying'")
        return [str(row[0]) for row in rows]

    async def mark_applied(self, change_id: str) -> None:
        """An interrupted change counts as applied (its undo checks each path anyway)."""
        await self._run("UPDATE changes SET state = 'applied' WHERE id = ?", (change_id,))

    async def held_backups(self) -> list[tuple[str, float, dict[str, int]]]:
        """(change id, applied at, sha256 -> size) for every change holding backups, oldest
        first."""
        rows = await self._rows(
            "SELECT c.id, c.applied_at, o.sha256, o.size FROM changes c"
            " JOIN change_objects o ON o.change_id = c.id ORDER BY c.applied_at, c.id"
        )
        held: dict[str, tuple[str, float, dict[str, int]]] = {}
        for change_id, applied_at, sha, size in rows:
            entry = held.setdefault(change_id, (change_id, applied_at, {}))
            entry[2][sha] = int(size)
        return list(held.values())

    async def old_changes(self, before: float) -> list[str]:
        """Applied changes older than `before`, oldest first."""
        rows = await self._rows(
            "SELECT id FROM changes WHERE state IN ('applied', 'applying') AND applied_at < ?"
            " ORDER BY applied_at",
            (before,),
        )
        return [str(row[0]) for row in rows]

    async def forget_old(self, before: float) -> None:
        """Delete settled rows older than `before` (their backups are already released)."""
        await self._run(
            "DELETE FROM dry_runs WHERE state != 'pending' AND created_at < ?", (before,)
        )
        await self._run(
            "DELETE FROM changes WHERE state IN ('undone', 'expired') AND applied_at < ?",
            (before,),
        )


def _change(row: sqlite3.Row) -> Change:
    id_, command, applied_at, undo_until, effects, state = row
    return Change(id_, command, applied_at, undo_until, _load(effects), state)
