"""remember / recall / forget: facts kept with provenance, found by relevance, forgotten by a
commit that Undo reverses; over-long texts and bare secrets refused."""

from __future__ import annotations

import pytest

from core.memory import Committed, Memory, MemoryRefused, Provenance, Quarantined, Tier
from tests.core.memory.conftest import Home


async def test_remember_then_recall(memory: Memory) -> None:
    done = await memory.remember("my server is called atlas", provenance=Provenance.OWNER)
    assert isinstance(done, Committed)
    await memory.remember("I prefer metric units", provenance=Provenance.OWNER)
    (item,) = await memory.recall("what's my server's name", limit=1)
    assert item.text == "my server is called atlas"
    assert item.id == done.item_id
    assert item.commit_id == done.commit_id
    assert item.provenance is Provenance.OWNER
    assert item.tier is Tier.ARCHIVAL
    assert [i.text for i in await memory.recall("metric")] == ["I prefer metric units"]
    assert await memory.recall("the of and") == []


async def test_a_megabyte_is_refused_and_nothing_stored(memory: Memory) -> None:
    with pytest.raises(MemoryRefused, match="too long to remember") as caught:
        await memory.remember("a" * 1_000_000, provenance=Provenance.OWNER)
    assert "1,000,000" in caught.value.user_message
    assert await memory.recent_commits() == []


async def test_a_secret_alone_is_refused(memory: Memory) -> None:
    key = "sk-proj-" + "Q" * 40
    with pytest.raises(MemoryRefused, match="secret"):
        await memory.remember(key, provenance=Provenance.OWNER)
    with pytest.raises(MemoryRefused, match="secret"):
        await memory.remember(f"  {key} . ", provenance=Provenance.OWNER)
    assert await memory.recent_commits() == []


async def test_a_secret_inside_a_fact_is_never_stored(memory: Memory) -> None:
    token = "ghp_" + "x1" * 20
    done = await memory.remember(f"the deploy bot uses {token}", provenance=Provenance.OWNER)
    assert isinstance(done, Committed)
    item = await memory.item(done.item_id)
    assert item is not None
    assert token not in item.text
    assert item.text == "the deploy bot uses [REDACTED]"


async def test_empty_text_is_refused(memory: Memory) -> None:
    with pytest.raises(MemoryRefused, match="nothing to remember"):
        await memory.remember("   \n", provenance=Provenance.OWNER)


async def test_forget_removes_and_leaves_a_receipt(home: Home) -> None:
    memory = home.memory
    done = await memory.remember("the wifi is called moat", provenance=Provenance.OWNER)
    assert isinstance(done, Committed)
    gone = await memory.forget(done.item_id, provenance=Provenance.OWNER)
    assert not isinstance(gone, Quarantined)
    assert await memory.recall("wifi") == []
    assert await memory.item(done.item_id) is None
    receipts = await home.receipts("memory_edit_committed")
    assert [r.action_name for r in receipts] == ["remember", "forget"]
    assert "moat" not in receipts[0].inputs + receipts[0].outputs  # ids and sizes only


async def test_forget_of_an_unknown_item_is_refused(memory: Memory) -> None:
    with pytest.raises(MemoryRefused, match="no memory item"):
        await memory.forget("m-nope", provenance=Provenance.OWNER)


async def test_episodic_facts_belong_to_their_conversation(memory: Memory) -> None:
    done = await memory.remember(
        "we are renaming the project to falcon", provenance=Provenance.OWNER, chat="c1",
        tier="episodic",
    )  # fmt: skip
    assert isinstance(done, Committed)
    context = await memory.context("c1", "what are we doing?", 2000)
    assert done.item_id in context.item_ids
    await memory.new_conversation("c1")
    context = await memory.context("c1", "what are we doing?", 2000)
    assert done.item_id not in context.item_ids
    assert [i.text for i in await memory.recall("falcon")] == [
        "we are renaming the project to falcon"
    ]


async def test_an_episodic_fact_needs_a_chat(memory: Memory) -> None:
    with pytest.raises(MemoryRefused, match="chat"):
        await memory.remember("x marks it", provenance=Provenance.OWNER, tier="episodic")
