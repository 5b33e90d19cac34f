"""Action tokens: opaque, HMAC-signed, single-use, expiring, bound to one card.

A token is `base64url(id || mac)` (32 characters, well under Telegram's 64-byte callback
limit). What it means lives server-side in state.db, so a token carries nothing to forge.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiosqlite

from core.errors import InvalidToken
from core.storage.commits import Commits, Direct
from core.storage.versions import Schema, migrate

_ID_BYTES = 12
_MAC_BYTES = 12

SCHEMA = Schema(
    "action_tokens",
    (
        """
CREATE TABLE IF NOT EXISTS action_tokens (
    token_id TEXT PRIMARY KEY,
    action TEXT NOT NULL,
    payload TEXT NOT NULL,
    card_id TEXT NOT NULL,
    expires_at REAL NOT NULL,
    used_at REAL,
    used_by TEXT
);
CREATE INDEX IF NOT EXISTS action_tokens_by_card ON action_tokens(card_id);
""",
        # The press that spent a token (channel and update id), so the same press handled
        # again after a crash is granted again instead of refused as already used.
        "ALTER TABLE action_tokens ADD COLUMN used_for TEXT",
    ),
)


@dataclass(frozen=True, slots=True)
class TokenGrant:
    """What a valid token stood for, returned once when it is redeemed."""

    action: str
    payload: dict[str, Any]
    card_id: str


class ActionTokens:
    """Issues and redeems button tokens. Redeeming one spends every token of its card,
    so the first tap on a card wins and the others are refused."""

    def __init__(
        self,
        db: aiosqlite.Connection,
        secret: bytes,
        clock: Callable[[], float] = time.time,
        *,
        writer: Commits | None = None,
    ) -> None:
        """`writer`: where a new token is committed (state.db's group commit), else on `db`;
        redeeming always goes through `db`."""
        self._db = db
        self._commits = writer or Direct(db)
        self._key = hashlib.sha256(b"lancelot-action-token|" + secret).digest()
        self._clock = clock

    async def setup(self) -> None:
        """Create or upgrade the table."""
        await migrate(self._db, SCHEMA)

    def _mac(self, raw_id: bytes) -> bytes:
        return hmac.new(self._key, raw_id, hashlib.sha256).digest()[:_MAC_BYTES]

    async def issue(
        self, action: str, payload: dict[str, Any], card_id: str, ttl: float = 1800.0
    ) -> str:
        """A new token for `action` on card `card_id`, valid for `ttl` seconds."""
        raw_id = secrets.token_bytes(_ID_BYTES)
        await self._commits.execute(
            "INSERT INTO action_tokens (token_id, action, payload, card_id, expires_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (raw_id.hex(), action, json.dumps(payload), card_id, self._clock() + ttl),
        )
        return _spelling(raw_id + self._mac(raw_id)).decode()

    def _token_id(self, token: str) -> str:
        """The id a token names once its MAC holds. Base64 decoding skips what it cannot
        read and takes `+`, `/` and padding, so a token is read only in the spelling issue()
        gave it: any other (`~`, a space or `=` inserted, a newline added) is refused as
        forged, as a token this server never signed is."""
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (binascii.Error, ValueError):
            raise InvalidToken("malformed") from None
        if len(raw) != _ID_BYTES + _MAC_BYTES:
            raise InvalidToken("malformed")
        if not hmac.compare_digest(_spelling(raw), token.encode()):
            raise InvalidToken("forged")
        raw_id, mac = raw[:_ID_BYTES], raw[_ID_BYTES:]
        if not hmac.compare_digest(mac, self._mac(raw_id)):
            raise InvalidToken("forged")
        return raw_id.hex()

    async def redeem(
        self, token: str, used_by: str, card_id: str | None = None, *, press: str | None = None
    ) -> TokenGrant:
        """Spend a token (and its card's siblings). Raises InvalidToken saying why not.

        `card_id`, when the channel knows which card the press came from, must match.
        `press` names the press itself (channel and update id): the same press handled again
        after a crash is granted again, so what it started is finished, not refused.
        """
        token_id = self._token_id(token)
        async with self._db.execute(
            "SELECT action, payload, card_id, expires_at, used_at, used_for FROM action_tokens"
            " WHERE token_id = ?",
            (token_id,),
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            raise InvalidToken("unknown")
        action, payload, bound_card, expires_at, used_at, used_for = row
        if card_id is not None and card_id != bound_card:
            raise InvalidToken("bound to another card")
        if used_at is not None:
            if press is not None and used_for == press:
                return TokenGrant(action, json.loads(payload), bound_card)
            raise InvalidToken("already used")
        now = self._clock()
        if now > expires_at:
            raise InvalidToken("expired")
        cur = await self._db.execute(
            "UPDATE action_tokens SET used_at = ?, used_by = ?, used_for = ?"
            " WHERE card_id = ? AND used_at IS NULL",
            (now, used_by, press, bound_card),
        )
        if cur.rowcount == 0:  # another tap on the same card got there first
            raise InvalidToken("already used")
        return TokenGrant(action, json.loads(payload), bound_card)

    async def withdraw(self, card_id: str) -> int:
        """Spend every unused token of a card whose buttons mean nothing any more (its task
        ended): a later tap is refused as already used, like any stale button."""
        cur = await self._db.execute(
            "UPDATE action_tokens SET used_at = ?, used_by = 'withdrawn'"
            " WHERE card_id = ? AND used_at IS NULL",
            (self._clock(), card_id),
        )
        return cur.rowcount

    async def prune(self, older_than: float = 7 * 86400) -> int:
        """Forget tokens that expired long ago."""
        cur = await self._db.execute(
            "DELETE FROM action_tokens WHERE expires_at < ?", (self._clock() - older_than,)
        )
        return cur.rowcount


def _spelling(raw: bytes) -> bytes:
    """The one way a token's bytes are written: base64url, unpadded."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=")
