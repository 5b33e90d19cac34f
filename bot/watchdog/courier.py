"""Gets one notice to every owner's chat: each chat once, the others tried again later
(backing off, or as long as a 429 asks) until each has it or refused it for good."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from bot.watchdog.targets import Target
from core.errors import DeliveryFailed, DeliveryRejected, RateLimited
from core.health.watch import Notice
from core.runtime.backoff import Backoff, BackoffConfig

log = logging.getLogger(__name__)

RETRY = BackoffConfig(min_delay=2.0, max_delay=60.0, jitter=0.2)


class Courier:
    """Delivers the notice it is given; a new notice starts over with its own text."""

    def __init__(
        self,
        targets: Sequence[Target],
        text_for: Callable[[Notice], str],
        *,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._targets = targets
        self._text_for = text_for
        self._monotonic = monotonic
        self._backoff = Backoff(RETRY)
        self._notice: Notice | None = None
        self._text = ""
        self._done: set[str] = set()
        self._not_before = 0.0
        self._ident = ""  # the notice's name on a platform that makes retries idempotent

    async def deliver(self, notice: Notice) -> bool:
        """Try `notice` on the chats that do not have it yet; True once none is left."""
        if notice != self._notice:
            self._start(notice)
        if self._monotonic() < self._not_before:
            return False
        chats = [(t, chat) for t in self._targets for chat in t.recipients()]
        wait = 0.0
        for target, chat in chats:
            key = f"{target.name}:{chat}"
            if key not in self._done:
                wait = max(wait, await self._send(target, chat, key))
        if chats and wait == 0:
            return True
        if not chats:
            log.warning("watchdog: %s, but no owner to tell yet (pair first)", notice.kind)
        self._not_before = self._monotonic() + max(wait, next(self._backoff))
        return False

    def _start(self, notice: Notice) -> None:
        self._notice = notice
        self._text = self._text_for(notice)
        self._done = set()
        self._not_before = 0.0
        self._backoff.reset()
        self._ident = f"lancelot-watchdog-{notice.kind}-{time.time_ns()}"

    async def _send(self, target: Target, chat: str, key: str) -> float:
        """Send to one chat; the seconds to wait before trying it again (0: done with it)."""
        try:
            await target.send(chat, self._text, self._ident)
        except RateLimited as exc:
            log.warning("watchdog: %s asks to wait %g s", target.name, exc.retry_after)
            return max(exc.retry_after, 0.001)
        except DeliveryRejected as exc:
            log.error("watchdog: %s refused the message for good: %s", target.name, exc)
        except DeliveryFailed as exc:
            log.warning("watchdog: not delivered yet, trying again: %s", exc)
            return 0.001  # the backoff decides how long
        else:
            log.info("watchdog: told the owner on %s", target.name)
        self._done.add(key)
        return 0.0
