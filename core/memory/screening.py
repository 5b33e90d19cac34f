"""What may be remembered: texts bounded, secrets masked (a text that is nothing but a secret
refused), and which edits must wait for the owner in quarantine."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from core.memory.model import MemoryRefused, Op, Provenance, Tier
from core.receipts.redaction import MASK, Redactor
from core.security.sanitizer import Sanitizer

MAX_ITEM_CHARS = 2_000
_LEFT_OVER = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class Screening:
    """The redactor and sanitizer every remembered text passes through."""

    redactor: Redactor
    sanitizer: Sanitizer
    max_chars: int = MAX_ITEM_CHARS

    def admit(self, text: str) -> str:
        """The text to store: secrets masked. MemoryRefused for an empty or over-long text, or
        one that is nothing but a secret (a masked key alone tells nothing worth keeping)."""
        if len(text) > self.max_chars:  # checked first: a megabyte is never even scanned
            raise MemoryRefused(
                f"too long to remember: {len(text):,} characters (at most {self.max_chars:,});"
                " keep the fact itself, or save the text as a file"
            )
        stripped = text.strip()
        if not stripped:
            raise MemoryRefused("there is nothing to remember in an empty text")
        masked = self.redactor.text(stripped)
        if masked != stripped and not _LEFT_OVER.sub("", masked.replace(MASK, "")):
            raise MemoryRefused(
                "that looks like a secret (a key, token or password); secrets are never remembered"
            )
        return masked

    def hold_reason(
        self, changes: Iterable[tuple[Op, Tier, str]], provenance: Provenance
    ) -> str | None:
        """Why an edit must wait for the owner's Approve, or None when it may go in now:
        it edits a core block, comes from a tool's output, or holds text the sanitizer flags.
        The system (seeding, maintenance) edits core blocks without asking."""
        reasons: list[str] = []
        if provenance is Provenance.TOOL:
            reasons.append("it comes from a tool's output")
        for op, tier, text in changes:
            if tier is Tier.CORE and provenance is not Provenance.SYSTEM:
                reasons.append("it changes a core block")
            if op is not Op.DELETE and text:
                verdict = self.sanitizer.check(text)
                if not verdict.allowed:
                    reasons.append(f"its text reads like an injection ({verdict.detail})")
        unique = list(dict.fromkeys(reasons))
        return "; ".join(unique) if unique else None
