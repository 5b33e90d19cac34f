"""Receipts for refused strangers and requests, bounded so a flood cannot fill the disk."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus


class RefusalLog:
    """Writes a receipt for a refusal unless the same source had one within `per_source`
    seconds or `global_per_minute` were written in the last minute. Each receipt carries how
    many refusals were suppressed since the previous one; `suppressed` is the running total.
    """

    def __init__(
        self,
        ledger: ReceiptStore,
        *,
        per_source: float = 3600.0,
        global_per_minute: int = 10,
        max_sources: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ledger = ledger
        self._per_source = per_source
        self._global = global_per_minute
        self._max_sources = max_sources
        self._clock = clock
        self._last: OrderedDict[str, float] = OrderedDict()
        self._recent: list[float] = []
        self._pending_suppressed = 0
        self.suppressed = 0

    def record(
        self,
        action_type: str,
        action_name: str,
        source: str,
        details: dict[str, Any] | None = None,
    ) -> bool:
        """Record a refusal of `source`; returns whether a receipt was written."""
        now = self._clock()
        if not self._allowed(source, now):
            self._pending_suppressed += 1
            self.suppressed += 1
            return False
        self._ledger.append(
            Receipt(
                action_type=action_type,
                action_name=action_name,
                inputs={"source": source, **(details or {})},
                outputs={"suppressed_since_last": self._pending_suppressed},
                status=ReceiptStatus.REFUSED,
            )
        )
        self._pending_suppressed = 0
        return True

    def _allowed(self, source: str, now: float) -> bool:
        self._recent = [t for t in self._recent if now - t < 60.0]
        last = self._last.get(source)
        if last is not None and now - last < self._per_source:
            return False
        if len(self._recent) >= self._global:
            return False
        self._recent.append(now)
        self._last[source] = now
        self._last.move_to_end(source)
        while len(self._last) > self._max_sources:
            self._last.popitem(last=False)
        return True
