"""The inbound gate: size, binary junk, rate limit, credentials and the sanitizer, in that order."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from core.receipts.redaction import holds_credential
from core.security.ratelimit import SlidingWindowLimiter
from core.security.sanitizer import Sanitizer

JUNK_RATIO = 0.3
KEY_IN_CHAT = (
    "That message holds what looks like a key or token, so I did not take it: whatever is "
    "typed here stays in the chat history (and my records would keep it). Please delete it "
    "from the chat and rotate it if it is real. Model keys come from the environment "
    "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY) or from `lancelot setup` in the "
    "terminal where Lancelot runs."
)


@dataclass(frozen=True, slots=True)
class GateResult:
    """Whether a message may go on; if not, why (rule) and what to tell the sender."""

    allowed: bool
    text: str
    rule: str | None = None
    reply: str | None = None
    notes: tuple[str, ...] = ()
    notify: bool = True  # False for refusals the sender was already told about


def looks_binary(text: str) -> bool:
    """True for NUL bytes or mostly control/undecodable characters."""
    if "\x00" in text:
        return True
    if not text:
        return False
    sample = text[:4096]
    junk = sum(
        1
        for ch in sample
        if ch == "\ufffd"
        or (unicodedata.category(ch) in ("Cc", "Cs", "Co", "Cn") and ch not in "\n\r\t")
    )
    return junk / len(sample) > JUNK_RATIO


class InputGate:
    """Applies the inbound checks for one sender's message."""

    def __init__(self, sanitizer: Sanitizer, limiter: SlidingWindowLimiter, max_chars: int) -> None:
        self._sanitizer = sanitizer
        self._limiter = limiter
        self._max_chars = max_chars
        self._told_to_slow_down: dict[str, float] = {}

    def check(self, sender: str, text: str) -> GateResult:
        """Run every check; the first that says no decides."""
        if len(text) > self._max_chars:
            return GateResult(
                False,
                "",
                "size",
                f"That message is {len(text):,} characters; I take up to {self._max_chars:,}. "
                "Please send it in smaller parts.",
            )
        if looks_binary(text):
            return GateResult(
                False, "", "binary", "That looks like binary data, not text, so I left it alone."
            )
        if not self._limiter.allow(sender):
            wait = self._limiter.retry_after(sender)
            already = self._told_to_slow_down.get(sender, -1.0) > 0
            self._told_to_slow_down[sender] = wait
            return GateResult(
                False,
                "",
                "rate_limit",
                f"You're sending messages faster than I take them; try again in {wait:.0f} s.",
                notify=not already,
            )
        self._told_to_slow_down.pop(sender, None)
        return self.screen(text)

    def screen(self, text: str) -> GateResult:
        """The checks of the words alone (size, binary, sanitizer), not counted against the
        rate: for text a message brought in another form (a voice note's transcript)."""
        if len(text) > self._max_chars:
            return GateResult(
                False,
                "",
                "size",
                f"That is {len(text):,} characters; I take up to {self._max_chars:,}.",
            )
        if looks_binary(text):
            return GateResult(False, "", "binary", "That looks like binary data, not text.")
        if holds_credential(text):
            return GateResult(False, "", "credential", KEY_IN_CHAT)
        verdict = self._sanitizer.check(text)
        if not verdict.allowed:
            return GateResult(
                False,
                verdict.cleaned,
                verdict.rule,
                "Sorry, I can't act on that message: it reads like an attempt to change my "
                "instructions. If that wasn't the intent, please rephrase it.",
                verdict.notes,
            )
        return GateResult(True, verdict.cleaned, notes=verdict.notes)
