"""The cards queued for delivery, in one lane per chat: a chat's cards go out in order, one
at a time, each lane a task that ends when it runs dry."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable, Container, Hashable, Iterable
from dataclasses import dataclass, field

from core.delivery.store import OutboxRow
from core.runtime.tasks import Supervisor

Deliver = Callable[[OutboxRow], Awaitable[None]]


@dataclass(eq=False)
class _Lane:
    rows: deque[OutboxRow] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None


class Lanes:
    """Rows by key until delivered (or given up), each in its chat's lane.

    `deliver` returns once a row is final; `on_left` hears of each row a cancelled lane left
    behind (it stays pending in the table); `on_idle` is told which lanes are still busy
    whenever one ends.
    """

    def __init__(
        self,
        deliver: Deliver,
        *,
        tasks: Supervisor,
        on_left: Callable[[OutboxRow], None],
        on_idle: Callable[[Container[Hashable]], None],
    ) -> None:
        self._deliver = deliver
        self._supervisor = tasks
        self._on_left = on_left
        self._on_idle = on_idle
        self._lanes: dict[tuple[str, str], _Lane] = {}
        self._queued: dict[str, OutboxRow] = {}

    def __contains__(self, key: str) -> bool:
        return key in self._queued

    def rows(self) -> Iterable[OutboxRow]:
        """Every row queued, in no particular order."""
        return self._queued.values()

    def add(self, row: OutboxRow) -> None:
        """Queue a row at the end of its chat's lane (once: a queued key is left alone)."""
        if row.key in self._queued:
            return
        self._queued[row.key] = row
        lane = self._lanes.get(row.lane)
        if lane is None:
            lane = self._lanes[row.lane] = _Lane()
            lane.task = self._supervisor.spawn(self._run(row.lane, lane), name="outbox-lane")
        lane.rows.append(row)

    async def cancel(self, channel: str) -> None:
        """Stop every lane of a channel (a delivery under way decides how it ends)."""
        lanes = [lane for key, lane in self._lanes.items() if key[0] == channel]
        for lane in lanes:
            if lane.task is not None:
                lane.task.cancel()
        for lane in lanes:
            if lane.task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await lane.task

    async def _run(self, key: tuple[str, str], lane: _Lane) -> None:
        try:
            while lane.rows:
                row = lane.rows[0]
                await self._deliver(row)
                lane.rows.popleft()
                self._queued.pop(row.key, None)
        finally:
            if self._lanes.get(key) is lane:
                del self._lanes[key]
            for row in lane.rows:  # stopped early: they stay pending in the table
                self._queued.pop(row.key, None)
                self._on_left(row)
            self._on_idle(self._lanes)
