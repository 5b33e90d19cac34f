"""Viewer links: single use, expiry, pruning; session cookies: signed, expiring, unforgeable."""

from __future__ import annotations

import asyncio
import base64
import hmac
from collections.abc import AsyncIterator
from pathlib import Path

import aiosqlite
import pytest

from core.errors import InvalidToken
from core.security.viewer_access import KEEP_SPENT_LINKS, ViewerAccess
from core.state import open_state_db
from tests.fakes.spellings import decodes_alike, other_spellings

SECRET = b"s" * 32


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[aiosqlite.Connection]:
    conn = await open_state_db(tmp_path / "state.db")
    yield conn
    await conn.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def access(db: aiosqlite.Connection, clock: Clock) -> ViewerAccess:
    access = ViewerAccess(db, SECRET, link_ttl=600, session_ttl=3600, clock=clock)
    await access.setup()
    return access


async def refusal(access: ViewerAccess, token: str) -> str:
    with pytest.raises(InvalidToken) as caught:
        await access.redeem(token)
    return caught.value.reason


async def test_a_link_redeems_once_into_a_valid_session(access: ViewerAccess) -> None:
    token = await access.issue_link()
    session = await access.redeem(token)
    assert access.check_session(session)
    assert await refusal(access, token) == "used"


async def test_concurrent_redeems_of_one_link_let_exactly_one_through(
    access: ViewerAccess,
) -> None:
    token = await access.issue_link()
    attempts = [access.redeem(token) for _ in range(5)]
    results = await asyncio.gather(*attempts, return_exceptions=True)
    assert len([r for r in results if isinstance(r, str)]) == 1
    refusals = [r for r in results if not isinstance(r, str)]
    assert all(isinstance(r, InvalidToken) and r.reason == "used" for r in refusals)


async def test_links_expire(access: ViewerAccess, clock: Clock) -> None:
    token = await access.issue_link()
    clock.now += 601
    assert await refusal(access, token) == "expired"


async def test_revoking_forgets_unopened_links_only(access: ViewerAccess) -> None:
    opened, waiting, also_waiting = [await access.issue_link() for _ in range(3)]
    session = await access.redeem(opened)
    assert await access.revoke_unopened() == 2
    assert await refusal(access, waiting) == "unknown"
    assert await refusal(access, also_waiting) == "unknown"
    assert await refusal(access, opened) == "used"
    assert access.check_session(session)  # a session already open stays open
    assert await access.revoke_unopened() == 0


async def test_unknown_and_malformed_tokens_are_refused(access: ViewerAccess) -> None:
    assert await refusal(access, "not-a-token") == "unknown"
    assert await refusal(access, "") == "unknown"
    assert await refusal(access, "x" * 10_000) == "unknown"


async def test_only_a_hash_of_the_token_is_stored(
    access: ViewerAccess, db: aiosqlite.Connection
) -> None:
    token = await access.issue_link()
    async with db.execute("SELECT * FROM viewer_links") as cur:
        rows = list(await cur.fetchall())
    assert len(rows) == 1
    assert all(token not in str(value) for value in rows[0])


async def test_old_links_are_pruned(
    access: ViewerAccess, db: aiosqlite.Connection, clock: Clock
) -> None:
    old = await access.issue_link()
    await access.redeem(await access.issue_link())
    clock.now += 600 + KEEP_SPENT_LINKS + 1
    await access.issue_link()
    async with db.execute("SELECT count(*) FROM viewer_links") as cur:
        assert await cur.fetchone() == (1,)
    assert await refusal(access, old) == "unknown"


async def test_sessions_expire(access: ViewerAccess, clock: Clock) -> None:
    session = await access.redeem(await access.issue_link())
    clock.now += 3599
    assert access.check_session(session)
    clock.now += 2
    assert not access.check_session(session)


async def test_sessions_signed_with_another_secret_are_refused(
    access: ViewerAccess, db: aiosqlite.Connection, clock: Clock
) -> None:
    other = ViewerAccess(db, b"o" * 32, clock=clock)
    assert not access.check_session(other.new_session())


async def test_a_session_with_a_longer_expiry_written_in_is_refused(
    access: ViewerAccess, clock: Clock
) -> None:
    body, mac = access.new_session().split(".")
    version, expires, sid = base64.urlsafe_b64decode(body + "==").decode().split("|")
    longer = f"{version}|{int(expires) + 10**6}|{sid}".encode()
    forged = base64.urlsafe_b64encode(longer).rstrip(b"=").decode() + "." + mac
    assert not access.check_session(forged)


async def test_only_the_exact_spelling_of_a_session_is_accepted(access: ViewerAccess) -> None:
    session = await access.redeem(await access.issue_link())
    body, mac = session.split(".")
    spellings = other_spellings(mac)
    # Most would have been read as the MAC itself by a lenient decoder.
    assert sum(decodes_alike(s, mac) for s in spellings) >= 40
    for spelling in spellings:
        assert not access.check_session(f"{body}.{spelling}"), repr(spelling)
    for spelling in other_spellings(body):
        assert not access.check_session(f"{spelling}.{mac}"), repr(spelling)
    assert access.check_session(session)


async def test_only_the_exact_spelling_of_a_link_redeems(access: ViewerAccess) -> None:
    token = await access.issue_link()
    spellings = other_spellings(token)
    assert len(spellings) >= 40
    for spelling in spellings:
        assert await refusal(access, spelling) == "unknown", repr(spelling)
    assert access.check_session(await access.redeem(token))


@pytest.mark.parametrize(
    "cookie", [None, "", "abc", "a.b.c", ".", "é.é", "x" * 1000, "dGVzdA.!!!!"]
)
def test_garbage_cookies_are_refused(access: ViewerAccess, cookie: str | None) -> None:
    assert access.check_session(cookie) is False


async def test_each_session_is_distinct(access: ViewerAccess) -> None:
    first = await access.redeem(await access.issue_link())
    second = await access.redeem(await access.issue_link())
    assert first != second


async def test_a_short_secret_is_rejected(db: aiosqlite.Connection) -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        ViewerAccess(db, b"short")


async def test_a_spent_link_is_told_apart_for_a_day_then_forgotten(
    access: ViewerAccess, clock: Clock
) -> None:
    lapsed = await access.issue_link()
    clock.now += 600 + 86400  # expired a day ago, to the second: still known
    await access.prune()
    assert await refusal(access, lapsed) == "expired"
    clock.now += 1
    await access.prune()
    assert await refusal(access, lapsed) == "unknown"


def test_a_session_cookie_from_before_a_restart_is_still_good(access: ViewerAccess) -> None:
    """The cookie's format and MAC are as the class documents them, so sessions outlive a
    restart or an upgrade (they are stateless)."""
    body = base64.urlsafe_b64encode(b"v1|1700003600|" + b"ab" * 16).rstrip(b"=")
    mac = hmac.new(SECRET, b"viewer-session|" + body, "sha256").digest()
    written = base64.urlsafe_b64encode(mac).rstrip(b"=").decode()
    assert access.check_session(f"{body.decode()}.{written}")


async def test_links_last_ten_minutes_and_sessions_twelve_hours_by_default(
    db: aiosqlite.Connection, clock: Clock
) -> None:
    access = ViewerAccess(db, SECRET, clock=clock)
    await access.setup()
    kept, lapsed = await access.issue_link(), await access.issue_link()
    clock.now += 599
    session = await access.redeem(kept)
    clock.now += 1
    assert await refusal(access, lapsed) == "expired"
    clock.now += 43200 - 2  # the session was opened a second before
    assert access.check_session(session)
    clock.now += 1
    assert not access.check_session(session)


async def test_a_secret_of_sixteen_bytes_will_do(db: aiosqlite.Connection) -> None:
    assert ViewerAccess(db, b"k" * 16).check_session(ViewerAccess(db, b"k" * 16).new_session())
    with pytest.raises(ValueError, match=r"^the viewer secret must be at least 16 bytes$"):
        ViewerAccess(db, b"k" * 15)


@pytest.mark.parametrize("inside", [b"v1|1700003600", b"not base64 \xff", b"v2|1700003600|ab"])
def test_a_signed_cookie_that_is_not_a_session_is_refused(
    access: ViewerAccess, inside: bytes
) -> None:
    """Only this server can sign a cookie; even so, what it signed must read as a session."""
    body = base64.urlsafe_b64encode(inside).rstrip(b"=")
    mac = hmac.new(SECRET, b"viewer-session|" + body, "sha256").digest()
    cookie = f"{body.decode()}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
    assert access.check_session(cookie) is False
    assert access.check_session(cookie[:-1] + ("A" if cookie[-1] != "A" else "B")) is False
