"""A few overlay slots kept ready, so a dry run does not wait for a container to start.

Slots are made with the sensitive files the last scan of the workspace found masked; a slot
made for others (the workspace changed) is removed when taken, never used.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from core.tools.effects.overlay import OverlaySlot, SlotFactory
from core.tools.sandbox.engine import SandboxUnavailable
from core.tools.sandbox.masks import Masks, find_sensitive

log = logging.getLogger(__name__)

TAKE_TIMEOUT = 60.0


class SlotPool:
    """Keeps `size` slots started and waiting; each is taken once and then disposed of."""

    def __init__(self, factory: SlotFactory, size: int) -> None:
        self.factory = factory
        self._size = size
        self._ready: list[OverlaySlot] = []
        self._creating = 0
        self._error: SandboxUnavailable | None = None
        self._changed = asyncio.Condition()
        self._tasks: set[asyncio.Task[None]] = set()
        self._start_lock = asyncio.Lock()
        self._started = False
        self._closed = False
        self._masks = Masks()  # what the last scan of the workspace found

    async def start(self) -> None:
        """Remove what a previous run left behind, then fill the pool in the background."""
        async with self._start_lock:  # the sweep must not meet our own new slots
            if self._started:
                return
            try:
                await asyncio.to_thread(self.factory.sweep)
            except Exception as exc:  # the engine may be down; take() reports it
                log.info("stale dry-run containers not checked: %s", exc)
            self._masks = await self._scan()
            self._started = True
        self._refill()

    async def _scan(self) -> Masks:
        return await asyncio.to_thread(find_sensitive, self.factory.workspace)

    async def take(self) -> OverlaySlot:
        """A ready slot (the oldest) with the workspace's sensitive files, as they are now,
        masked; SandboxUnavailable if none can be made."""
        await self.start()
        self._masks = await self._scan()
        try:
            async with asyncio.timeout(TAKE_TIMEOUT), self._changed:
                while True:
                    slot = await self._ready_slot()
                    if slot.masks == self._masks:
                        break
                    self.dispose(slot, keep_upper=False)  # made before the workspace changed
        except TimeoutError:
            raise SandboxUnavailable(
                f"no sandbox container became ready within {TAKE_TIMEOUT:g} s"
            ) from None
        self._refill()
        return slot

    async def _ready_slot(self) -> OverlaySlot:
        """The oldest ready slot, once there is one (the caller holds `_changed`)."""
        while not self._ready:
            if self._error is not None and self._creating == 0:
                error, self._error = self._error, None
                raise error
            if self._closed:
                raise SandboxUnavailable("the sandbox is shutting down")
            self._refill()
            await self._changed.wait()
        return self._ready.pop(0)

    def dispose(self, slot: OverlaySlot, *, keep_upper: bool) -> None:
        """Remove a used slot in the background (keeping its upper layer if asked)."""
        self._spawn(asyncio.to_thread(self.factory.remove, slot, keep_upper=keep_upper))

    async def close(self) -> None:
        """Stop refilling, let calls in flight finish, remove every waiting slot."""
        self._closed = True
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        ready, self._ready = self._ready, []
        await asyncio.gather(*(asyncio.to_thread(self.factory.remove, slot) for slot in ready))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _refill(self) -> None:
        if self._closed or not self._started:
            return
        while len(self._ready) + self._creating < self._size:
            self._add()

    def _add(self) -> None:
        self._creating += 1
        self._spawn(self._create())

    async def _create(self) -> None:
        slot: OverlaySlot | None = None
        try:
            slot = await asyncio.to_thread(self.factory.create, self._masks)
            self._error = None
        except SandboxUnavailable as exc:
            self._error = exc
        except Exception as exc:  # an engine error: tell the waiters, keep running
            log.warning("dry-run container could not start: %s", exc)
            self._error = SandboxUnavailable(f"the sandbox could not start a container: {exc}")
        finally:
            self._creating -= 1
        async with self._changed:
            if slot is not None:
                if self._closed:
                    self._spawn(asyncio.to_thread(self.factory.remove, slot))
                else:
                    self._ready.append(slot)
            self._changed.notify_all()
