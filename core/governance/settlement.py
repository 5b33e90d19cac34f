"""Waiting for an approval to settle: per-approval futures resolved when it ends."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from core.governance.approvals import Approval
from core.governance.execution import RunReport


@dataclass(frozen=True, slots=True)
class Settlement:
    """How an approval ended, and what the approved run did (None when nothing ran here)."""

    approval: Approval
    report: RunReport | None = None


class SettlementWaiters:
    """Futures keyed by approval id. Registered before the card goes out, so a fast tap is
    never lost; a cancelled waiter simply stops listening."""

    def __init__(self) -> None:
        self._waiting: dict[str, list[asyncio.Future[Settlement]]] = {}

    def watch(self, approval_id: str) -> asyncio.Future[Settlement]:
        """A future resolved when `approval_id` settles."""
        waiter: asyncio.Future[Settlement] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(approval_id, []).append(waiter)
        return waiter

    def unwatch(self, approval_id: str, waiter: asyncio.Future[Settlement]) -> None:
        """Stop listening (after the result arrived, or on cancellation)."""
        waiting = self._waiting.get(approval_id, [])
        if waiter in waiting:
            waiting.remove(waiter)
        if not waiting:
            self._waiting.pop(approval_id, None)

    def wanted(self, approval_id: str) -> bool:
        """Whether anyone waits for this approval."""
        return bool(self._waiting.get(approval_id))

    def settle(self, settlement: Settlement) -> None:
        """Wake every waiter of this approval."""
        for waiter in self._waiting.get(settlement.approval.id, []):
            if not waiter.done():
                waiter.set_result(settlement)
