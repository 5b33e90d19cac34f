"""Checks the bearer token on every request from Google Chat, with google-auth.

The audience decides the kind of token. A project number: a JWT signed by the Chat service
account, issuer chat@system.gserviceaccount.com, checked against that account's x509 keys.
An endpoint URL: a Google ID token for that URL whose email is chat@system.gserviceaccount.com
(verified), checked against Google's OAuth2 keys.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from google.auth import exceptions as google_errors
from google.auth import jwt

from bot.channels.gchat.certs import CertCache
from core.config.settings import GChatSettings

CHAT_ISSUER = "chat@system.gserviceaccount.com"
ID_TOKEN_ISSUERS = ("accounts.google.com", "https://accounts.google.com")
CLOCK_SKEW = 10  # seconds


class Unverified(Exception):
    """The request does not prove it came from Google Chat; `reason` is a short word."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def audience_is_url(audience: str) -> bool:
    """Whether the app was set up with the endpoint URL as its authentication audience."""
    return audience.startswith(("https://", "http://"))


def _key_id(token: str) -> str | None:
    try:
        header = token.split(".", 1)[0]
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except (ValueError, UnicodeDecodeError):
        return None
    kid = decoded.get("kid") if isinstance(decoded, dict) else None
    return kid if isinstance(kid, str) else None


def _reason(exc: Exception) -> str:
    text = str(exc).lower()
    for word, reason in (
        ("expired", "expired"),
        ("too early", "not_yet_valid"),
        ("audience", "audience"),
        ("signature", "signature"),
        ("certificate for key id", "unknown_key"),
    ):
        if word in text:
            return reason
    return "malformed"


class RequestVerifier:
    """Verifies `Authorization: Bearer ...` for one configured audience."""

    def __init__(self, settings: GChatSettings, chat_certs: CertCache, id_certs: CertCache) -> None:
        if not settings.audience:
            raise ValueError("GCHAT_AUDIENCE is required")
        self._audience = settings.audience
        self._id_token = audience_is_url(settings.audience)
        self._certs = id_certs if self._id_token else chat_certs
        self._emails = frozenset(e.lower() for e in settings.id_token_emails)

    async def certificates(self) -> object:
        """The signing certificates this audience's tokens are checked against (fetched
        only when the cached copy is stale). Raises ProviderUnavailable."""
        return await self._certs.get()

    async def verify(self, authorization: str | None) -> Mapping[str, Any]:
        """The token's claims; raises Unverified. Certificate outages raise
        ProviderUnavailable (the caller answers 503, and Google retries)."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unverified("missing")
        token = token.strip()
        try:  # what cannot even be read is refused before any certificate is fetched
            jwt.decode(token, verify=False)  # type: ignore[no-untyped-call]
        except (google_errors.GoogleAuthError, ValueError):
            raise Unverified("malformed") from None
        certs = await self._certs.get(need=_key_id(token))
        try:
            claims = jwt.decode(  # type: ignore[no-untyped-call]
                token, certs=certs, audience=self._audience, clock_skew_in_seconds=CLOCK_SKEW
            )
        except (google_errors.GoogleAuthError, ValueError) as exc:
            raise Unverified(_reason(exc)) from None
        if not isinstance(claims, Mapping):
            raise Unverified("malformed")
        self._check_issuer(claims)
        return claims

    def _check_issuer(self, claims: Mapping[str, Any]) -> None:
        if not self._id_token:
            if claims.get("iss") != CHAT_ISSUER:
                raise Unverified("issuer")
            return
        if claims.get("iss") not in ID_TOKEN_ISSUERS:
            raise Unverified("issuer")
        email = str(claims.get("email", "")).lower()
        if email not in self._emails or claims.get("email_verified") is not True:
            raise Unverified("email")
