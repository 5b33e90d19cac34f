"""Working memory: each chat's current task (request, plan, step results, the approval it
waits on), kept in memory.db so a task waiting on an approval outlives a restart."""

from __future__ import annotations

import json
from collections.abc import Sequence

from core.memory.model import WorkingTask
from core.memory.store import MemoryStore, Query, Row

_ROW = (
    "SELECT chat, request, plan, steps, approval_id, quest_id, started_at, updated_at"
    " FROM memory_tasks"
)
MAX_STEPS = 50  # the newest step results are kept; a task's row stays small


def _task(row: Row) -> WorkingTask:
    chat, request, plan, steps, approval_id, quest_id, started_at, updated_at = row
    return WorkingTask(
        chat,
        request,
        tuple(json.loads(plan)),
        tuple(json.loads(steps)),
        approval_id,
        quest_id,
        started_at,
        updated_at,
    )


def task_query(chat: str) -> Query:
    """The chat's current task."""
    return Query(f"{_ROW} WHERE chat = ?", (chat,))


def end_query(chat: str) -> Query:
    """End the chat's current task (nothing when it has none)."""
    return Query("DELETE FROM memory_tasks WHERE chat = ?", (chat,))


def parse_task(rows: Sequence[Row]) -> WorkingTask | None:
    """A task_query's task, if any."""
    return _task(rows[0]) if rows else None


class Tasks:
    """The memory_tasks table: one current task per chat."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    async def set(
        self,
        chat: str,
        request: str,
        plan: Sequence[str],
        steps: Sequence[str],
        approval_id: str | None,
        quest_id: str | None,
        at: float,
    ) -> WorkingTask:
        """Start or update the chat's task (it keeps its start time while the request is
        the same)."""
        steps = list(steps)[-MAX_STEPS:]
        await self._store.write(
            "INSERT INTO memory_tasks (chat, request, plan, steps, approval_id, quest_id,"
            " started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(chat) DO UPDATE SET plan = excluded.plan, steps = excluded.steps,"
            " approval_id = excluded.approval_id, quest_id = excluded.quest_id,"
            " started_at = CASE WHEN request = excluded.request THEN started_at"
            " ELSE excluded.started_at END, request = excluded.request,"
            " updated_at = excluded.updated_at",
            (chat, request, json.dumps(list(plan)), json.dumps(steps), approval_id, quest_id,
             at, at),
        )  # fmt: skip
        task = await self.get(chat)
        if task is None:  # pragma: no cover - the row was just written
            raise RuntimeError("the task row vanished")
        return task

    async def get(self, chat: str) -> WorkingTask | None:
        """The chat's current task."""
        query = task_query(chat)
        return parse_task(await self._store.read(query.sql, query.params))

    async def waiting_on(self, approval_id: str) -> WorkingTask | None:
        """The task that waits on this approval (after a restart, to resume it)."""
        row = await self._store.read_one(f"{_ROW} WHERE approval_id = ?", (approval_id,))
        return _task(row) if row else None

    async def finish(self, chat: str) -> WorkingTask | None:
        """End the chat's task; the task as it ended, if there was one."""
        task = await self.get(chat)
        if task is not None:
            await self._store.write(end_query(chat).sql, end_query(chat).params)
        return task

    async def expire(self, older_than: float) -> int:
        """Drop tasks not updated since `older_than`; how many."""
        return await self._store.write(
            "DELETE FROM memory_tasks WHERE updated_at < ?", (older_than,)
        )

    async def count(self) -> int:
        """How many chats have a current task."""
        row = await self._store.read_one("SELECT COUNT(*) FROM memory_tasks")
        return int(row[0]) if row else 0
