"""Conversations: turns in order per chat, /new starts afresh, the old turns stay searchable."""

from __future__ import annotations

import asyncio

import pytest

from core.memory import Memory
from core.memory.turns import MAX_TURN_CHARS
from tests.core.memory.conftest import Home


async def test_turns_come_back_oldest_first_per_chat(memory: Memory) -> None:
    await memory.record_turn("c1", "owner", "create notes.txt")
    await memory.record_turn("c2", "owner", "another chat")
    await memory.record_turn("c1", "tool", "wrote notes.txt (12 bytes)", receipt_id="r1")
    await memory.record_turn("c1", "agent", "Created notes.txt.")
    turns = await memory.conversation("c1")
    assert [(t.role, t.text) for t in turns] == [
        ("owner", "create notes.txt"),
        ("tool", "wrote notes.txt (12 bytes)"),
        ("agent", "Created notes.txt."),
    ]
    assert turns[1].receipt_id == "r1"
    assert [t.text for t in await memory.conversation("c1", limit=1)] == ["Created notes.txt."]


async def test_new_conversation_hides_earlier_turns_which_stay_searchable(memory: Memory) -> None:
    await memory.record_turn("c1", "owner", "the quarterly report is in reports/q3.md")
    await memory.new_conversation("c1")
    assert await memory.conversation("c1") == []
    context = await memory.context("c1", "where is the quarterly report?", 2000)
    assert "q3.md" not in str(context.sections)
    found = await memory.search_conversations("quarterly report")
    assert [t.text for t in found] == ["the quarterly report is in reports/q3.md"]
    await memory.record_turn("c1", "owner", "fresh start")
    assert [t.text for t in await memory.conversation("c1")] == ["fresh start"]


async def test_new_conversation_for_a_chat_never_seen(memory: Memory) -> None:
    await memory.new_conversation("c9")
    await memory.record_turn("c9", "owner", "hi")
    assert [t.text for t in await memory.conversation("c9")] == ["hi"]


async def test_secrets_in_turns_are_masked(memory: Memory) -> None:
    key = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2"
    await memory.record_turn("c1", "owner", f"use the key {key} for the API")
    (turn,) = await memory.conversation("c1")
    assert key not in turn.text
    assert "[REDACTED]" in turn.text


async def test_a_huge_turn_is_cut(memory: Memory) -> None:
    await memory.record_turn("c1", "tool", "x" * 1_000_000)
    (turn,) = await memory.conversation("c1")
    assert len(turn.text) == MAX_TURN_CHARS
    assert turn.text.endswith("[…]")


async def test_search_takes_any_text(memory: Memory) -> None:
    await memory.record_turn("c1", "owner", 'say "hello" AND NOT near(x) *')
    assert await memory.search_conversations('"') == []
    assert len(await memory.search_conversations('hello" OR near(')) == 1


async def test_an_unknown_role_is_refused(memory: Memory) -> None:
    with pytest.raises(ValueError, match="role"):
        await memory.record_turn("c1", "system", "hello")  # type: ignore[arg-type]
    assert await memory.conversation("c1") == []


async def test_a_new_chat_is_looked_up_once_however_many_ask_at_once(memory: Memory) -> None:
    # A request's context and its turn ask for the chat's conversation together.
    store = memory.store
    reads, writes = store.reads, store.writes
    numbers = await asyncio.gather(*(memory.turns.current("c1", 1.0) for _ in range(3)))
    assert numbers == [1, 1, 1]
    assert (store.reads - reads, store.writes - writes) == (1, 1)  # one read, one insert
    assert await memory.turns.current("c1", 2.0) == 1
    assert (store.reads - reads, store.writes - writes) == (1, 1)  # then it is known


async def test_a_known_chat_is_read_once_after_a_restart(home: Home) -> None:
    await home.memory.record_turn("c1", "owner", "hello")
    await home.memory.new_conversation("c1")
    fresh = Memory(home.memory.store, home.ledger, clock=home.clock)  # a new process's cache
    store = fresh.store
    reads, writes = store.reads, store.writes
    numbers = await asyncio.gather(*(fresh.turns.current("c1", 1.0) for _ in range(2)))
    assert numbers == [2, 2]
    assert (store.reads - reads, store.writes - writes) == (1, 0)


async def test_a_chat_started_while_it_was_looked_up_is_read_again(memory: Memory) -> None:
    store = memory.store
    async with store.transaction() as w:  # a /new elsewhere holds the writer meanwhile
        lookup = asyncio.create_task(memory.turns.current("c1", 1.0))
        await asyncio.sleep(0.2)  # it read no chat and waits to record one
        await w.execute(
            "INSERT INTO memory_chats (chat, conversation, started_at) VALUES ('c1', 2, 0)"
        )
    assert await lookup == 2
