"""Fingerprints copied from elsewhere (a digest card, a `/receipts verify` reply) to check the
ledger against: a ledger position (`<seq>:<hex>`) or the public key (`key:<hex>`).

The chat keeps them where the machine cannot rewrite them: a ledger rolled back together with
its checkpoints, or checkpoints re-signed with a new key, still differ from what it holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_POSITION = re.compile(r"^\s*#?(\d{1,18})\s*:\s*([0-9a-fA-F]{8,64})\s*$")
_KEY = re.compile(r"^\s*key\s*:\s*([0-9a-fA-F]{8,64})\s*$", re.IGNORECASE)
EXPECTED = "expected <seq>:<hex>, e.g. 120:9f2c…, or key:<hex>"


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """A ledger position copied from elsewhere (a digest card): seq and a hash prefix."""

    seq: int
    prefix: str

    @classmethod
    def parse(cls, text: str) -> Fingerprint:
        """`<seq>:<hex>` (8 to 64 hex digits); ValueError otherwise."""
        found = _POSITION.match(text)
        if found is None:
            raise ValueError(f"not a fingerprint: {text!r} ({EXPECTED})")
        return cls(int(found.group(1)), found.group(2).lower())

    def __str__(self) -> str:
        return f"{self.seq}:{self.prefix}"


@dataclass(frozen=True, slots=True)
class KeyFingerprint:
    """The checkpoint public key copied from elsewhere: a prefix of its SHA-256."""

    prefix: str

    def matches(self, digest: str) -> bool:
        """True when `digest` (a key's SHA-256, hex) begins with this prefix."""
        return digest.startswith(self.prefix)

    def __str__(self) -> str:
        return f"key:{self.prefix}"


def parse_against(text: str) -> Fingerprint | KeyFingerprint:
    """A fingerprint of either kind; ValueError (naming what was expected) otherwise."""
    found = _KEY.match(text)
    if found is not None:
        return KeyFingerprint(found.group(1).lower())
    return Fingerprint.parse(text)
