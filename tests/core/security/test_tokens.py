"""Action tokens: opaque, short, single-use, expiring, bound to their card."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
from collections.abc import AsyncIterator
from pathlib import Path

import aiosqlite
import pytest

from core.delivery.writer import StateWriter
from core.errors import InvalidToken
from core.security.tokens import ActionTokens
from core.state import open_state_db
from tests.fakes.spellings import decodes_alike, other_spellings


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[aiosqlite.Connection]:
    connection = await open_state_db(tmp_path / "state.db")
    yield connection
    await connection.close()


@pytest.fixture
async def tokens(db: aiosqlite.Connection) -> ActionTokens:
    store = ActionTokens(db, b"test-secret-0123456789", clock=Clock())
    await store.setup()
    return store


async def test_token_fits_telegram_callback_data_and_reveals_nothing(tokens: ActionTokens) -> None:
    token = await tokens.issue("approve", {"command": "rm -rf /workspace/old"}, "card-1")
    assert len(token.encode()) <= 64
    for secret in ("approve", "workspace", "card-1"):  # (2 letters could occur by chance)
        assert secret not in token
    again = await tokens.issue("approve", {"command": "rm -rf /workspace/old"}, "card-1")
    assert again != token  # opaque: the same action never gives the same token


async def test_redeem_returns_the_action_once(tokens: ActionTokens) -> None:
    token = await tokens.issue("approve", {"id": 7}, "card-1")
    grant = await tokens.redeem(token, "owner", "card-1")
    assert (grant.action, grant.payload, grant.card_id) == ("approve", {"id": 7}, "card-1")
    with pytest.raises(InvalidToken, match=r"^invalid token: already used$"):
        await tokens.redeem(token, "owner", "card-1")


async def test_first_tap_on_a_card_spends_its_other_buttons(tokens: ActionTokens) -> None:
    approve = await tokens.issue("approve", {}, "card-1")
    deny = await tokens.issue("deny", {}, "card-1")
    other = await tokens.issue("approve", {}, "card-2")
    await tokens.redeem(approve, "owner")
    with pytest.raises(InvalidToken, match=r"^invalid token: already used$"):
        await tokens.redeem(deny, "owner")
    assert (await tokens.redeem(other, "owner")).card_id == "card-2"


async def test_the_same_press_handled_again_after_a_crash_is_granted_again(
    tokens: ActionTokens,
) -> None:
    # A kill after the token was spent but before its action was recorded: the press comes
    # again (same channel, same update) and must finish, not be refused as already used.
    approve = await tokens.issue("approval.decide", {"choice": "approve"}, "card-1")
    await tokens.issue("approval.decide", {"choice": "deny"}, "card-1")
    first = await tokens.redeem(approve, "owner", press="telegram:41")
    again = await tokens.redeem(approve, "owner", press="telegram:41")
    assert again == first
    for other in ("telegram:42", None):  # another press, or one with no update id
        with pytest.raises(InvalidToken, match="already used"):
            await tokens.redeem(approve, "owner", press=other)


async def test_forged_malformed_and_unknown_tokens(tokens: ActionTokens) -> None:
    token = await tokens.issue("approve", {}, "card-1")
    flipped = token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]
    with pytest.raises(InvalidToken, match=r"^invalid token: forged$"):
        await tokens.redeem(flipped, "owner")
    for junk in ("", "not a token", "%%%%", "a" * 200):
        with pytest.raises(InvalidToken, match=r"malformed|forged"):
            await tokens.redeem(junk, "owner")
    other_server = ActionTokens(tokens._db, b"another-secret-987654321")
    foreign = await other_server.issue("approve", {}, "card-9")
    with pytest.raises(InvalidToken, match=r"^invalid token: forged$"):
        await tokens.redeem(foreign, "owner")


async def test_only_the_exact_spelling_of_a_token_redeems(tokens: ActionTokens) -> None:
    token = await tokens.issue("approve", {"id": 7}, "card-1")
    spellings = other_spellings(token)
    assert len(spellings) >= 40
    # Most would have been read as the token itself by a lenient decoder.
    assert sum(decodes_alike(s, token) for s in spellings) >= 35
    for spelling in spellings:
        with pytest.raises(InvalidToken) as refused:
            await tokens.redeem(spelling, "owner", "card-1")
        if decodes_alike(spelling, token):  # the token's own bytes: refused as a forgery
            assert refused.value.reason == "forged", repr(spelling)
        else:
            assert refused.value.reason in ("forged", "malformed"), repr(spelling)
    # None of them spent the card: the genuine token still redeems, once.
    assert (await tokens.redeem(token, "owner", "card-1")).payload == {"id": 7}


async def test_expired_token(db: aiosqlite.Connection) -> None:
    clock = Clock()
    store = ActionTokens(db, b"test-secret-0123456789", clock=clock)
    await store.setup()
    token = await store.issue("approve", {}, "card-1", ttl=60)
    clock.now += 61
    with pytest.raises(InvalidToken, match=r"^invalid token: expired$"):
        await store.redeem(token, "owner")


async def test_token_pressed_on_another_card_is_refused(tokens: ActionTokens) -> None:
    token = await tokens.issue("approve", {}, "card-1")
    with pytest.raises(InvalidToken) as refused:
        await tokens.redeem(token, "owner", card_id="card-2")
    assert refused.value.reason == "bound to another card"
    assert (await tokens.redeem(token, "owner", card_id="card-1")).action == "approve"


async def test_tokens_issued_together_are_one_commit_and_redeem_at_once(
    tmp_path: Path, db: aiosqlite.Connection
) -> None:
    async with StateWriter(tmp_path / "state.db") as writer:
        store = ActionTokens(db, b"test-secret-0123456789", writer=writer)
        await store.setup()
        approve, deny = await asyncio.gather(
            store.issue("approve", {"id": 1}, "card-1"), store.issue("deny", {"id": 1}, "card-1")
        )
        assert (writer.commits, writer.writes) == (1, 2)
        assert (await store.redeem(deny, "owner", "card-1")).action == "deny"
        with pytest.raises(InvalidToken, match=r"^invalid token: already used$"):
            await store.redeem(approve, "owner", "card-1")


async def test_a_token_cut_short_is_malformed_not_forged(tokens: ActionTokens) -> None:
    token = await tokens.issue("approve", {}, "card-1")
    for cut in (token[:-4], token[:28], token + "AAAA"):  # whole base64 quanta: decodable
        with pytest.raises(InvalidToken) as refused:
            await tokens.redeem(cut, "owner")
        assert refused.value.reason == "malformed", cut


async def test_a_genuine_token_this_database_never_issued_is_unknown(
    tmp_path: Path, tokens: ActionTokens
) -> None:
    elsewhere = await open_state_db(tmp_path / "other.db")
    try:
        twin = ActionTokens(elsewhere, b"test-secret-0123456789")
        await twin.setup()
        token = await twin.issue("approve", {}, "card-1")
    finally:
        await elsewhere.close()
    with pytest.raises(InvalidToken, match=r"^invalid token: unknown$"):
        await tokens.redeem(token, "owner")


async def test_a_button_lasts_half_an_hour_by_default(db: aiosqlite.Connection) -> None:
    clock = Clock()
    store = ActionTokens(db, b"test-secret-0123456789", clock=clock)
    await store.setup()
    kept, lapsed = await store.issue("approve", {}, "card-1"), await store.issue("go", {}, "card-2")
    clock.now += 1800
    assert (await store.redeem(kept, "owner")).action == "approve"
    clock.now += 0.5
    with pytest.raises(InvalidToken, match=r"^invalid token: expired$"):
        await store.redeem(lapsed, "owner")


async def test_buttons_issued_before_an_upgrade_still_redeem(db: aiosqlite.Connection) -> None:
    """The MAC's key is derived as it always was (SHA-256 of a fixed label and the secret),
    so the buttons on cards already in the chat keep working after a restart or upgrade."""
    store = ActionTokens(db, b"test-secret-0123456789", clock=Clock())
    await store.setup()
    raw_id = bytes(range(12))
    key = hashlib.sha256(b"lancelot-action-token|test-secret-0123456789").digest()
    mac = hmac.new(key, raw_id, hashlib.sha256).digest()[:12]
    await db.execute(
        "INSERT INTO action_tokens (token_id, action, payload, card_id, expires_at)"
        " VALUES (?, 'approve', '{}', 'card-1', ?)",
        (raw_id.hex(), 2_000_000.0),
    )
    old = base64.urlsafe_b64encode(raw_id + mac).decode()
    assert (await store.redeem(old, "owner", "card-1")).action == "approve"


async def test_a_used_button_says_used_even_once_it_would_have_expired(
    db: aiosqlite.Connection,
) -> None:
    clock = Clock()
    store = ActionTokens(db, b"test-secret-0123456789", clock=clock)
    await store.setup()
    token = await store.issue("approve", {}, "card-1", ttl=60)
    await store.redeem(token, "owner")
    clock.now += 61
    with pytest.raises(InvalidToken) as refused:
        await store.redeem(token, "owner")
    assert refused.value.reason == "already used"


async def test_two_taps_at_once_on_one_card_let_one_through(tokens: ActionTokens) -> None:
    approve = await tokens.issue("approve", {}, "card-1")
    deny = await tokens.issue("deny", {}, "card-1")
    both = await asyncio.gather(
        tokens.redeem(approve, "owner"), tokens.redeem(deny, "owner"), return_exceptions=True
    )
    granted = [r for r in both if not isinstance(r, BaseException)]
    refused = [r.reason for r in both if isinstance(r, InvalidToken)]
    assert (len(granted), refused) == (1, ["already used"])


async def test_withdrawn_buttons_are_refused_as_used(tokens: ActionTokens) -> None:
    kept = await tokens.issue("approve", {}, "card-2")
    stale = [await tokens.issue(a, {}, "card-1") for a in ("approve", "deny")]
    assert await tokens.withdraw("card-1") == 2
    assert await tokens.withdraw("card-1") == 0
    for token in stale:
        with pytest.raises(InvalidToken, match=r"^invalid token: already used$"):
            await tokens.redeem(token, "owner")
    assert (await tokens.redeem(kept, "owner")).card_id == "card-2"


async def test_tokens_are_forgotten_a_week_after_they_expired(db: aiosqlite.Connection) -> None:
    clock = Clock()
    store = ActionTokens(db, b"test-secret-0123456789", clock=clock)
    await store.setup()
    token = await store.issue("approve", {}, "card-1", ttl=60)
    clock.now += 60 + 7 * 86400
    assert await store.prune() == 0  # expired exactly a week ago: kept
    clock.now += 1
    assert await store.prune() == 1
    with pytest.raises(InvalidToken, match=r"^invalid token: unknown$"):
        await store.redeem(token, "owner")
    assert await store.prune() == 0


async def test_a_token_whose_last_character_is_x_redeems(db: aiosqlite.Connection) -> None:
    """Only base64 padding is stripped from a token's end, whatever character ends it."""
    store = ActionTokens(db, b"test-secret-0123456789", clock=Clock())
    await store.setup()
    key = hashlib.sha256(b"lancelot-action-token|test-secret-0123456789").digest()
    for number in range(1000):
        raw_id = number.to_bytes(12, "big")
        mac = hmac.new(key, raw_id, hashlib.sha256).digest()[:12]
        token = base64.urlsafe_b64encode(raw_id + mac)
        if token.endswith(b"X"):
            break
    await db.execute(
        "INSERT INTO action_tokens (token_id, action, payload, card_id, expires_at)"
        " VALUES (?, 'approve', '{}', 'card-1', ?)",
        (raw_id.hex(), 2_000_000.0),
    )
    assert (await store.redeem(token.decode(), "owner")).action == "approve"
