"""Capability tokens: the policy engine's signed permission to run one exact action, briefly."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import struct
import time
from collections.abc import Callable

from core.errors import PolicyDenied

APPROVED = b"|approved"  # mixed into the MAC of a token issued for an owner's approval


class CapabilityTokens:
    """HMAC(secret, action digest + expiry). The tool fabric runs nothing without a valid one.

    A token issued `approved` (the owner tapped Approve on a card for exactly this action) is
    signed apart: it runs like any other, and `approved()` tells it from one the policy
    issued alone (the sandbox shows a sensitive file only to an approved one).
    """

    def __init__(
        self, secret: bytes, ttl: float = 60.0, clock: Callable[[], float] = time.time
    ) -> None:
        self._key = hashlib.sha256(b"lancelot-capability|" + secret).digest()
        self._ttl = ttl
        self._clock = clock

    def _mac(self, digest: str, expires: int, approved: bool = False) -> bytes:
        message = digest.encode() + struct.pack(">Q", expires)
        if approved:
            message += APPROVED
        return hmac.new(self._key, message, hashlib.sha256).digest()[:16]

    def issue(self, digest: str, *, approved: bool = False) -> str:
        """A token for the action with this digest (`approved`: on the owner's tap)."""
        expires = int(self._clock() + self._ttl)
        raw = struct.pack(">Q", expires) + self._mac(digest, expires, approved)
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def approved(self, token: str | None, digest: str) -> bool:
        """Whether `token` is valid for this action now and was issued on an approval."""
        try:
            return self._verify(token, digest)
        except PolicyDenied:
            return False

    def check(self, token: str | None, digest: str) -> None:
        """Raise PolicyDenied unless `token` authorises exactly this action, now."""
        self._verify(token, digest)

    def _verify(self, token: str | None, digest: str) -> bool:
        """Check `token` as `check` does; whether it was issued on an approval."""
        if not token:
            raise PolicyDenied("capability-missing", message="no capability token")
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (binascii.Error, ValueError):
            raise PolicyDenied("capability-invalid", message="malformed token") from None
        # Decoding skips what it cannot read (`~`, spaces, `=`): only the issued spelling counts.
        spelled = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if len(raw) != 24 or not hmac.compare_digest(spelled, token):
            raise PolicyDenied("capability-invalid", message="malformed token")
        (expires,) = struct.unpack(">Q", raw[:8])
        approved = hmac.compare_digest(raw[8:], self._mac(digest, expires, approved=True))
        if not approved and not hmac.compare_digest(raw[8:], self._mac(digest, expires)):
            raise PolicyDenied("capability-invalid", message="token does not match the action")
        if self._clock() > expires:
            raise PolicyDenied("capability-expired", message="capability token expired")
        return approved
