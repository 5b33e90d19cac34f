"""Conversations: turns in order per chat, /new starts afresh, the old turns stay searchable."""

from __future__ import annotations

import pytest

from core.memory import Memory
from core.memory.turns import MAX_TURN_CHARS


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
