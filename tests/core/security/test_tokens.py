"""Action tokens: opaque, short, single-use, expiring, bound to their card."""

from __future__ import annotations

import asyncio
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
    with pytest.raises(InvalidToken, match="already used"):
        await tokens.redeem(token, "owner", "card-1")


async def test_first_tap_on_a_card_spends_its_other_buttons(tokens: ActionTokens) -> None:
    approve = await tokens.issue("approve", {}, "card-1")
    deny = await tokens.issue("deny", {}, "card-1")
    other = await tokens.issue("approve", {}, "card-2")
    await tokens.redeem(approve, "owner")
    with pytest.raises(InvalidToken, match="already used"):
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
    with pytest.raises(InvalidToken, match="forged"):
        await tokens.redeem(flipped, "owner")
    for junk in ("", "not a token", "%%%%", "a" * 200):
        with pytest.raises(InvalidToken, match=r"malformed|forged"):
            await tokens.redeem(junk, "owner")
    other_server = ActionTokens(tokens._db, b"another-secret-987654321")
    foreign = await other_server.issue("approve", {}, "card-9")
    with pytest.raises(InvalidToken, match="forged"):
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
    with pytest.raises(InvalidToken, match="expired"):
        await store.redeem(token, "owner")


async def test_token_pressed_on_another_card_is_refused(tokens: ActionTokens) -> None:
    token = await tokens.issue("approve", {}, "card-1")
    with pytest.raises(InvalidToken, match="another card"):
        await tokens.redeem(token, "owner", card_id="card-2")
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
        with pytest.raises(InvalidToken, match="already used"):
            await store.redeem(approve, "owner", "card-1")
