"""Receipt viewer access: one-time links that turn into a signed, expiring session cookie."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable

import aiosqlite

from core.errors import InvalidToken
from core.storage.versions import Schema, migrate

SCHEMA = Schema(
    "viewer_links",
    (
        """
CREATE TABLE IF NOT EXISTS viewer_links (
    token_hash TEXT PRIMARY KEY,
    expires_at REAL NOT NULL,
    used_at REAL
)
""",
    ),
)

# Used and expired links are kept this long (so "used"/"expired" can be told apart from
# "unknown"), then pruned.
KEEP_SPENT_LINKS = 24 * 3600.0
MAX_TOKEN_CHARS = 128
MAX_COOKIE_CHARS = 256
_SESSION_CONTEXT = b"viewer-session|"
_SESSION_VERSION = "v1"


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class ViewerAccess:
    """Issues and redeems one-time viewer links and checks session cookies.

    Links live in the state database (only their sha256, never the token itself).
    Sessions are stateless: `base64url("v1|<expiry>|<session id>") + "." + base64url(mac)`,
    where mac = HMAC-SHA256(secret, "viewer-session|" + the encoded body).
    """

    def __init__(
        self,
        db: aiosqlite.Connection,
        secret: bytes,
        link_ttl: float = 600,
        session_ttl: float = 43200,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if len(secret) < 16:
            raise ValueError("the viewer secret must be at least 16 bytes")
        self._db = db
        self._secret = secret
        self.link_ttl = link_ttl
        self.session_ttl = session_ttl
        self._clock = clock

    async def setup(self) -> None:
        """Create or upgrade the links table."""
        await migrate(self._db, SCHEMA)

    async def issue_link(self) -> str:
        """A fresh one-time token, valid for `link_ttl` seconds."""
        now = self._clock()
        await self.prune(now)
        token = secrets.token_urlsafe(32)
        await self._run(
            "INSERT INTO viewer_links (token_hash, expires_at, used_at) VALUES (?, ?, NULL)",
            (_token_hash(token), now + self.link_ttl),
        )
        return token

    async def redeem(self, token: str) -> str:
        """Consume a link token (once) and return a session cookie value.

        Raises InvalidToken with reason "unknown", "used" or "expired".
        """
        if not token or len(token) > MAX_TOKEN_CHARS:
            raise InvalidToken("unknown")
        now = self._clock()
        digest = _token_hash(token)
        # One statement claims the link, so two concurrent redeems cannot both succeed.
        claimed = await self._run(
            "UPDATE viewer_links SET used_at = ?"
            " WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?",
            (now, digest, now),
        )
        if claimed == 1:
            return self.new_session()
        raise InvalidToken(await self._why_not(digest))

    async def _run(self, sql: str, params: tuple[object, ...] = ()) -> int:
        """One statement, its cursor closed at once; how many rows it changed."""
        async with self._db.execute(sql, params) as cur:
            return cur.rowcount

    async def _why_not(self, digest: str) -> str:
        async with self._db.execute(
            "SELECT used_at FROM viewer_links WHERE token_hash = ?", (digest,)
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            return "unknown"
        return "used" if row[0] is not None else "expired"

    async def prune(self, now: float | None = None) -> None:
        """Forget links that expired more than a day ago."""
        cutoff = (self._clock() if now is None else now) - KEEP_SPENT_LINKS
        await self._run("DELETE FROM viewer_links WHERE expires_at < ?", (cutoff,))

    async def revoke_unopened(self) -> int:
        """Forget every link not yet opened (each must be asked for again); how many."""
        return await self._run("DELETE FROM viewer_links WHERE used_at IS NULL")

    def new_session(self) -> str:
        """A signed session cookie value valid for `session_ttl` seconds."""
        expires = int(self._clock() + self.session_ttl)
        body = _b64encode(f"{_SESSION_VERSION}|{expires}|{secrets.token_hex(16)}".encode())
        return f"{body}.{_b64encode(self._mac(body))}"

    def check_session(self, cookie: str | None) -> bool:
        """True for an untampered, unexpired session cookie. The MAC is compared as written,
        in constant time, before anything inside the cookie is trusted: decoding it first
        would take other spellings of the same bytes (a `~` or `=` inserted, other low bits
        in its last character) for the genuine cookie."""
        if (
            not cookie
            or len(cookie) > MAX_COOKIE_CHARS
            or not cookie.isascii()
            or cookie.count(".") != 1
        ):
            return False
        body, mac = cookie.split(".")
        if not hmac.compare_digest(mac, _b64encode(self._mac(body))):
            return False
        try:
            version, expires, _session_id = _b64decode(body).decode("ascii").split("|")
            return version == _SESSION_VERSION and int(expires) > self._clock()
        except (binascii.Error, ValueError):
            return False

    def _mac(self, body: str) -> bytes:
        return hmac.new(self._secret, _SESSION_CONTEXT + body.encode("ascii"), "sha256").digest()
