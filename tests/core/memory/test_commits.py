"""Commit-based edits: begin, stage, finish as one transaction; Undo restores the prior memory
and is refused when a later commit changed the same items; a receipt for every commit."""

from __future__ import annotations

import json

import pytest

from core.memory import (
    Commit,
    Committed,
    Memory,
    MemoryRefused,
    Provenance,
    Tier,
    UndoRefused,
)
from core.memory.model import Op
from tests.core.memory.conftest import Home


async def remembered(memory: Memory, text: str) -> Committed:
    done = await memory.remember(text, provenance=Provenance.OWNER)
    assert isinstance(done, Committed)
    return done


async def test_one_edit_stages_every_kind_of_change_and_commits_them_together(
    home: Home,
) -> None:
    memory = home.memory
    keep = await remembered(memory, "the boat is moored at pier 4")
    drop = await remembered(memory, "the car is in the garage")
    async with memory.begin(Provenance.AGENT, "tidy facts") as edit:
        new_id = edit.insert("the bike is in the shed")
        await edit.update(keep.item_id, "the boat is moored at pier 7")
        await edit.delete(drop.item_id)
    commit = edit.result
    assert isinstance(commit, Commit)
    assert [(c.op, c.item_id) for c in commit.changes] == [
        (Op.INSERT, new_id),
        (Op.UPDATE, keep.item_id),
        (Op.DELETE, drop.item_id),
    ]
    boat = await memory.item(keep.item_id)
    assert boat is not None
    assert (boat.text, boat.version, boat.provenance) == (
        "the boat is moored at pier 7",
        2,
        Provenance.AGENT,
    )
    assert await memory.item(drop.item_id) is None
    (receipt,) = [
        r for r in await home.receipts("memory_edit_committed") if r.action_name == "tidy facts"
    ]
    inputs = json.loads(receipt.inputs)
    assert inputs["commit_id"] == commit.id
    assert inputs["provenance"] == "agent"
    assert [c["op"] for c in inputs["changes"]] == ["insert", "update", "delete"]
    assert "pier" not in receipt.inputs  # what changed, never the words


async def test_an_edit_that_fails_part_way_writes_nothing(memory: Memory) -> None:
    target = await remembered(memory, "the printer is on floor 2")
    edit = memory.begin(Provenance.AGENT, "two changes")
    edit.insert("the scanner is on floor 3")
    await edit.update(target.item_id, "the printer is on floor 5")
    await memory.forget(target.item_id, provenance=Provenance.OWNER)  # meanwhile
    with pytest.raises(MemoryRefused, match="no memory item"):
        await edit.finish()
    assert await memory.recall("scanner") == []
    assert len(await memory.recent_commits()) == 2  # the remember and the forget only


async def test_an_edit_whose_block_raises_writes_nothing(memory: Memory) -> None:
    async def change_of_mind() -> None:
        async with memory.begin(Provenance.OWNER, "half done") as edit:
            edit.insert("the spare key is under the pot")
            raise RuntimeError("changed my mind")

    with pytest.raises(RuntimeError):
        await change_of_mind()
    assert await memory.recall("spare key") == []
    assert await memory.recent_commits() == []


async def test_an_empty_edit_is_refused(memory: Memory) -> None:
    with pytest.raises(MemoryRefused, match="nothing to change"):
        await memory.begin(Provenance.OWNER, "nothing").finish()


async def test_undo_restores_a_forgotten_item(home: Home) -> None:
    memory = home.memory
    done = await remembered(memory, "my server is called atlas")
    forgot = await memory.forget(done.item_id, provenance=Provenance.OWNER)
    assert isinstance(forgot, Commit)
    undo = await memory.undo_commit(forgot.id)
    assert undo.undo_of == forgot.id
    item = await memory.item(done.item_id)
    assert item is not None
    assert item.text == "my server is called atlas"
    assert [i.id for i in await memory.recall("atlas")] == [done.item_id]
    commits = await memory.recent_commits()
    assert [c.id for c in commits] == [undo.id, forgot.id, done.commit_id]
    assert commits[1].undone_by == undo.id
    names = [r.action_name for r in await home.receipts("memory_edit_committed")]
    assert names == ["remember", "forget", f"undo {forgot.id}"]


async def test_undo_of_an_update_brings_back_the_old_text(memory: Memory) -> None:
    done = await remembered(memory, "standup is at 9")
    edit = memory.begin(Provenance.OWNER, "correct")
    await edit.update(done.item_id, "standup is at 10")
    commit = await edit.finish()
    assert isinstance(commit, Commit)
    await memory.undo_commit(commit.id)
    item = await memory.item(done.item_id)
    assert item is not None
    assert (item.text, item.version) == ("standup is at 9", 3)


async def test_undo_of_a_remember_removes_the_item(memory: Memory) -> None:
    done = await remembered(memory, "lunch is at noon")
    await memory.undo_commit(done.commit_id)
    assert await memory.item(done.item_id) is None


async def test_undo_is_refused_after_a_later_commit_touched_the_same_item(
    memory: Memory,
) -> None:
    done = await remembered(memory, "the NAS is at 10.0.0.5")
    edit = memory.begin(Provenance.OWNER, "move the NAS")
    await edit.update(done.item_id, "the NAS is at 10.0.0.9")
    later = await edit.finish()
    assert isinstance(later, Commit)
    with pytest.raises(UndoRefused) as caught:
        await memory.undo_commit(done.commit_id)
    assert later.id in caught.value.user_message
    assert "first" in caught.value.user_message
    item = await memory.item(done.item_id)
    assert item is not None
    assert item.text == "the NAS is at 10.0.0.9"  # nothing changed by the refusal
    # Undo the later one first, then the earlier is still refused: the undo is itself later.
    await memory.undo_commit(later.id)
    with pytest.raises(UndoRefused):
        await memory.undo_commit(done.commit_id)


async def test_undo_twice_is_refused_and_an_undo_can_be_undone(memory: Memory) -> None:
    done = await remembered(memory, "the plant needs water on fridays")
    undo = await memory.undo_commit(done.commit_id)
    with pytest.raises(UndoRefused, match="already undone"):
        await memory.undo_commit(done.commit_id)
    await memory.undo_commit(undo.id)  # redo
    item = await memory.item(done.item_id)
    assert item is not None
    assert item.text == "the plant needs water on fridays"


async def test_undo_of_a_commit_that_changed_one_item_twice(memory: Memory) -> None:
    edit = memory.begin(Provenance.OWNER, "insert then fix")
    item_id = edit.insert("the router password hint is the dog")
    commit = await edit.finish()
    assert isinstance(commit, Commit)
    edit = memory.begin(Provenance.OWNER, "insert and fix at once")
    other = edit.insert("the alarm code hint is the year")
    await edit.finish()
    # Change the same item twice in one commit, then undo it.
    edit = memory.begin(Provenance.OWNER, "two updates")
    await edit.update(other, "the alarm hint is the year we moved")
    await edit.update(other, "the alarm hint is the year we moved in")
    twice = await edit.finish()
    assert isinstance(twice, Commit)
    await memory.undo_commit(twice.id)
    item = await memory.item(other)
    assert item is not None
    assert item.text == "the alarm code hint is the year"
    assert (await memory.item(item_id)) is not None


async def test_undo_of_an_unknown_commit_is_refused(memory: Memory) -> None:
    with pytest.raises(MemoryRefused, match="no memory commit"):
        await memory.undo_commit("c-nope")


async def test_recent_commits_show_provenance_and_changes(memory: Memory) -> None:
    for i in range(5):
        await memory.remember(f"fact number {i}", provenance=Provenance.AGENT)
    commits = await memory.recent_commits(3)
    assert [c.changes[0].text for c in commits] == [
        "fact number 4",
        "fact number 3",
        "fact number 2",
    ]
    assert all(c.provenance is Provenance.AGENT for c in commits)
    assert all(c.changes[0].tier is Tier.ARCHIVAL for c in commits)
