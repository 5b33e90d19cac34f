"""memory_cleanup and the owner's views: stale tasks expire, old conversations are summarised
(and the summary reaches the context), repeated facts become archival; export, review, counts."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from core.memory import Committed, Memory, Provenance, Tier
from core.memory.maintenance import KEEP_TURNS
from tests.core.memory.conftest import Home
from tests.fakes.calendar import CalendarClock


async def test_stale_tasks_expire_fresh_ones_stay(memory: Memory, clock: CalendarClock) -> None:
    await memory.set_task("old", "an abandoned task")
    clock.advance(2 * 86400)
    await memory.set_task("new", "a task of today")
    report = await memory.cleanup(clock.time())
    assert report.expired_tasks == 1
    assert await memory.task("old") is None
    assert await memory.task("new") is not None


async def test_an_ended_conversation_is_summarised_and_stays_searchable(
    home: Home, clock: CalendarClock
) -> None:
    memory = home.memory
    await memory.record_turn("c1", "owner", "create notes.txt with the shopping list")
    await memory.record_turn("c1", "agent", "Created notes.txt.")
    await memory.record_turn("c1", "owner", "add eggs to it\nand milk")
    await memory.record_turn("c1", "agent", "Added eggs and milk.")
    await memory.new_conversation("c1")
    report = await memory.cleanup(clock.time())
    assert (report.summaries, report.summarised_turns) == (1, 4)
    assert len(await memory.search_conversations("eggs")) == 2  # turns are kept
    again = await memory.cleanup(clock.time())
    assert (again.summaries, again.summarised_turns) == (0, 0)  # nothing twice
    (receipt, _) = await home.receipts("memory_cleanup")
    assert json.loads(receipt.outputs)["summarised_turns"] == 4


async def test_a_long_conversation_keeps_its_newest_turns_and_a_summary(
    memory: Memory, clock: CalendarClock
) -> None:
    for i in range(KEEP_TURNS + 30):
        role = "owner" if i % 2 == 0 else "agent"
        await memory.record_turn("c1", role, f"turn {i} about the garden")
    report = await memory.cleanup(clock.time())
    assert report.summarised_turns == 30
    context = await memory.context("c1", "garden", 100_000)
    sections = dict(context.sections)
    summary = sections["Earlier in this conversation (summary)"]
    assert "30 turns" in summary
    assert "- turn 0 about the garden" in summary  # the owner's requests
    assert "It ended: agent: turn 29 about the garden" in summary
    recent = sections["Recent conversation"].splitlines()
    assert recent[0] == "owner: turn 30 about the garden"
    assert len(recent) == KEEP_TURNS
    assert len(await memory.conversation("c1", limit=1000)) == KEEP_TURNS + 30
    # A second pass adds to the summary instead of losing the first.
    for i in range(20):
        await memory.record_turn("c1", "owner", f"later turn {i}")
    await memory.cleanup(clock.time())
    context = await memory.context("c1", "garden", 100_000)
    summary = dict(context.sections)["Earlier in this conversation (summary)"]
    assert "turn 0 about the garden" in summary
    assert "20 turns" in summary


async def test_a_fact_repeated_in_two_conversations_becomes_archival(
    memory: Memory, clock: CalendarClock
) -> None:
    first = await memory.remember(
        "The owner prefers metric units.", provenance=Provenance.OWNER, chat="c1", tier="episodic"
    )
    await memory.remember(
        "a one-off detail", provenance=Provenance.OWNER, chat="c1", tier="episodic"
    )
    await memory.new_conversation("c1")
    await memory.remember(
        "the owner prefers metric units", provenance=Provenance.AGENT, chat="c1", tier="episodic"
    )
    report = await memory.cleanup(clock.time())
    assert report.promoted == 1
    (item,) = await memory.recall("metric units")
    assert item.tier is Tier.ARCHIVAL
    assert item.provenance is Provenance.SYSTEM
    assert isinstance(first, Committed)
    assert await memory.item(first.item_id) is None
    assert (await memory.counts()).episodic == 1  # the one-off stays
    # The promotion is a commit like any other: Undo brings the copies back.
    await memory.undo_commit(report.commit_ids[0])
    assert await memory.item(first.item_id) is not None
    assert (await memory.counts()).archival == 0


async def test_export_writes_every_row_for_the_owner_only(home: Home, tmp_path: Path) -> None:
    memory = home.memory
    await memory.remember("my server is called atlas", provenance=Provenance.OWNER)
    await memory.record_turn("c1", "owner", "hello")
    await memory.set_task("c1", "a task", plan=["a", "b"])
    await memory.record_experience("do x", ["step"], [], [], "ok", 5)
    await memory.remember("from a web page", provenance=Provenance.TOOL)
    out = tmp_path / "memory.jsonl"
    lines = await memory.export_jsonl(out)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == lines
    kinds = sorted({r["kind"] for r in records})
    assert kinds == ["change", "commit", "experience", "item", "quarantined", "task", "turn"]
    (item,) = [r for r in records if r["kind"] == "item"]
    assert item["text"] == "my server is called atlas"
    (task,) = [r for r in records if r["kind"] == "task"]
    assert task["plan"] == ["a", "b"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


async def test_review_rows_and_counts(memory: Memory) -> None:
    await memory.remember("fact one", provenance=Provenance.OWNER)
    done = await memory.remember("fact two " + "x" * 200, provenance=Provenance.AGENT)
    assert isinstance(done, Committed)
    await memory.undo_commit(done.commit_id)
    await memory.remember("from a file", provenance=Provenance.TOOL)
    await memory.record_turn("c1", "owner", "hi")
    rows = await memory.review(limit=10)
    assert [r.reason for r in rows] == [f"undo {done.commit_id}", "remember", "remember"]
    assert rows[1].undone_by == rows[0].commit_id
    line = rows[1].line()
    assert "(undone by" in line
    assert "insert archival" in line
    assert max(len(part) for part in line.splitlines()) < 200
    counts = await memory.counts()
    assert (counts.archival, counts.quarantined, counts.commits, counts.turns) == (1, 1, 3, 1)
