"""What became of each outbox key: final outcomes remembered (a card handed over again is
answered without a database read), and the callers waiting for a card's first attempt."""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from core.errors import DeliveryDeferred, LancelotError
from core.events import MessageRef

Outcome = MessageRef | LancelotError

KEPT_OUTCOMES = 10_000  # final outcomes remembered by key


class Outcomes:
    """Final outcomes by key (the newest KEPT_OUTCOMES), and the futures waiting on them."""

    def __init__(self) -> None:
        self._final: OrderedDict[str, Outcome] = OrderedDict()
        self._waiters: dict[str, asyncio.Future[Outcome]] = {}

    def __contains__(self, key: str) -> bool:
        return key in self._final

    def final(self, key: str) -> Outcome | None:
        """How the key's delivery ended, if it has and is still remembered."""
        return self._final.get(key)

    async def first_attempt(self, key: str, wait: float) -> Outcome:
        """The outcome of the key's first attempt, or DeliveryDeferred after `wait` seconds
        (the card stays queued either way)."""
        known = self._final.get(key)
        if known is not None:  # delivered already, while the caller was marking its update
            return known
        future = self._waiters.get(key)
        if future is None:
            future = self._waiters[key] = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(wait):
                return await asyncio.shield(future)
        except TimeoutError:
            return DeliveryDeferred("still queued for delivery")

    def finish(self, key: str, outcome: Outcome) -> None:
        """The key's delivery ended: remember it and tell whoever waits."""
        self.keep(key, outcome)
        self.settle(key, outcome)

    def keep(self, key: str, outcome: Outcome) -> None:
        """Remember a final outcome (the oldest is forgotten past KEPT_OUTCOMES); a failure
        without its traceback, whose frames would keep each attempt's card and payload."""
        self._final[key] = _bare(outcome)
        while len(self._final) > KEPT_OUTCOMES:
            self._final.popitem(last=False)

    def settle(self, key: str, outcome: Outcome) -> None:
        """Answer whoever waits on the key's first attempt (the delivery may go on)."""
        future = self._waiters.pop(key, None)
        if future is not None and not future.done():
            future.set_result(outcome)


def _bare(outcome: Outcome) -> Outcome:
    """`outcome`, and for a failure each exception of its chain, without a traceback."""
    seen: set[int] = set()
    error: BaseException | None = outcome if isinstance(outcome, BaseException) else None
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        error.__traceback__ = None
        error = error.__cause__ or error.__context__
    return outcome
