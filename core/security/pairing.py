"""Pairing: the first person to send the code shown where Lancelot runs becomes its owner.

The code is 8 characters from an alphabet without look-alikes (32^8, about 10^12 codes),
made with `secrets`, single-use, and expiring (a new one is made, and announced, when it
does). Guessing is hopeless: each sender has a few wrong tries per quarter hour, everyone
together a few dozen per window, after which tries are refused for a while and the code is
replaced. Replies to a sender are bounded too, so the bot cannot be used to spam.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I, O, 0 or 1
LENGTH = 8


class Verdict(StrEnum):
    """What became of one message sent while pairing."""

    PAIRED = "paired"  # the right code: this sender is the owner now
    WRONG = "wrong"  # shaped like a code, but not the current one
    EXPIRED = "expired"  # the code that was shown before the current one
    TOO_MANY = "too_many"  # tries refused for a while (this sender, or everyone)
    NOT_A_CODE = "not_a_code"  # anything else: the sender is told what to do
    CLOSED = "closed"  # pairing is over


@dataclass(frozen=True, slots=True)
class Attempt:
    """A verdict, how long until tries are allowed again (TOO_MANY), and whether the sender
    should be answered at all (replies are bounded per sender)."""

    verdict: Verdict
    wait_seconds: float = 0.0
    answer: bool = True


@dataclass(frozen=True, slots=True)
class PairingLimits:
    """How long a code lives and how many tries and replies are allowed."""

    code_ttl: float = 600.0
    tries_per_sender: int = 5
    sender_window: float = 900.0
    tries_overall: int = 30
    overall_window: float = 600.0
    replies_per_sender: int = 8
    reply_window: float = 3600.0
    max_senders: int = 4096


def normalized(text: str) -> str:
    """What a person typed, as a code: upper case, spaces and dashes dropped."""
    return "".join(text.split()).replace("-", "").upper()


def looks_like_code(text: str) -> bool:
    """Whether `text` could be a code (and so counts as a try)."""
    code = normalized(text)
    return len(code) == LENGTH and all(c in ALPHABET for c in code)


def shown(code: str) -> str:
    """The code as printed: two groups of four."""
    return f"{code[:4]}-{code[4:]}"


class Pairing:
    """The current code and the tries against it. `on_code(code, ttl)` is called with each
    new code (the first one too), so it can be shown where Lancelot runs."""

    def __init__(
        self,
        on_code: Callable[[str, float], None],
        *,
        limits: PairingLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._on_code = on_code
        self.limits = limits or PairingLimits()
        self._clock = clock
        self._code = ""
        self._previous = ""
        self._expires = 0.0
        self._tries: OrderedDict[str, deque[float]] = OrderedDict()
        self._replies: OrderedDict[str, deque[float]] = OrderedDict()
        self._overall: deque[float] = deque()
        self._locked_until = 0.0
        self.closed = False
        self._new_code()

    def seconds_left(self) -> float:
        """Until the current code expires."""
        return max(0.0, self._expires - self._clock())

    def refresh(self) -> None:
        """Replace the code if it has expired (announcing the new one)."""
        if not self.closed and self._clock() >= self._expires:
            self._new_code()

    def attempt(self, sender: str, text: str) -> Attempt:
        """Judge one message from `sender`. The right code closes pairing for good."""
        if self.closed:
            return Attempt(Verdict.CLOSED, answer=False)
        now = self._clock()
        self.refresh()
        answer = self._may_answer(sender, now)
        if not looks_like_code(text):
            return Attempt(Verdict.NOT_A_CODE, answer=answer)
        wait = self._wait(sender, now)
        if wait > 0:
            return Attempt(Verdict.TOO_MANY, wait, answer)
        code = normalized(text)
        if hmac.compare_digest(code, self._code):
            self.closed = True
            self._code = self._previous = ""
            return Attempt(Verdict.PAIRED)
        if self._previous and hmac.compare_digest(code, self._previous):
            return Attempt(Verdict.EXPIRED, answer=answer)
        self._count_wrong(sender, now)
        return Attempt(Verdict.WRONG, answer=answer)

    def _new_code(self) -> None:
        self._previous = self._code
        self._code = "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))
        self._expires = self._clock() + self.limits.code_ttl
        self._on_code(self._code, self.limits.code_ttl)

    def _wait(self, sender: str, now: float) -> float:
        """Seconds this sender must wait before trying again (0: may try now)."""
        lim = self.limits
        if now < self._locked_until:
            return self._locked_until - now
        mine = _recent(self._tries.get(sender), now, lim.sender_window)
        if len(mine) >= lim.tries_per_sender:
            return mine[0] + lim.sender_window - now
        return 0.0

    def _count_wrong(self, sender: str, now: float) -> None:
        lim = self.limits
        _remember(self._tries, sender, now, lim.max_senders)
        self._overall.append(now)
        _recent(self._overall, now, lim.overall_window)
        if len(self._overall) >= lim.tries_overall:
            # Everyone waits, and the code that drew the guesses is replaced.
            self._locked_until = now + lim.overall_window
            self._overall.clear()
            self._new_code()
            self._previous = ""  # a guess at the replaced code is just wrong

    def _may_answer(self, sender: str, now: float) -> bool:
        lim = self.limits
        mine = _recent(self._replies.get(sender), now, lim.reply_window)
        if len(mine) >= lim.replies_per_sender:
            return False
        _remember(self._replies, sender, now, lim.max_senders)
        return True


def _recent(times: deque[float] | None, now: float, window: float) -> deque[float]:
    """`times` without those older than `window` (emptied in place)."""
    if times is None:
        return deque()
    while times and now - times[0] >= window:
        times.popleft()
    return times


def _remember(
    book: OrderedDict[str, deque[float]], sender: str, now: float, max_senders: int
) -> None:
    book.setdefault(sender, deque()).append(now)
    book.move_to_end(sender)
    while len(book) > max_senders:
        book.popitem(last=False)
