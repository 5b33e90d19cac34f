"""The context compiler: core blocks first, then the task, the conversation, and relevant facts
and past tasks, all within the token budget; the ids of what went in, never more."""

from __future__ import annotations

from core.memory import Block, Memory, Provenance
from core.memory.context import tokens
from tests.fakes.calendar import CalendarClock


def titles(sections: list[tuple[str, str]]) -> list[str]:
    return [title for title, _ in sections]


async def test_sections_come_in_order_with_their_ids(memory: Memory) -> None:
    await memory.set_block(Block.PERSONA, "You are Lancelot, terse.", provenance=Provenance.SYSTEM)
    await memory.set_block(Block.HUMAN, "The owner is Ana.", provenance=Provenance.SYSTEM)
    await memory.remember("my server is called atlas", provenance=Provenance.OWNER)
    await memory.remember("the cat is called Merlin", provenance=Provenance.OWNER)
    await memory.set_task("c1", "restart the server", plan=["ssh in", "restart"])
    await memory.record_turn("c1", "owner", "create notes.txt")
    await memory.record_turn("c1", "agent", "Created notes.txt.")
    await memory.record_experience(
        "restart the web server", ["check status", "restart"], [], ["tool_run"], "done", 1200
    )
    await memory.record_turn("c1", "owner", "restart the server atlas")

    context = await memory.context("c1", "restart the server atlas", 4000)
    assert titles(context.sections) == [
        "Persona",
        "About the owner",
        "Current task",
        "Recent conversation",
        "What you remember",
        "Similar past tasks",
    ]
    text = dict(context.sections)
    assert text["Recent conversation"] == "owner: create notes.txt\nagent: Created notes.txt."
    assert text["What you remember"] == "- my server is called atlas"
    assert "Merlin" not in str(context.sections)
    assert "1. ssh in" in text["Current task"]
    assert len(context.item_ids) == 2 + 1 + 2 + 1 + 1
    assert context.tokens <= 4000


async def test_the_budget_is_never_exceeded_and_the_newest_turns_stay(memory: Memory) -> None:
    await memory.set_block(Block.PERSONA, "p" * 1200, provenance=Provenance.SYSTEM)
    for i in range(300):
        await memory.record_turn("c1", "owner", f"message number {i} " + "w" * 80)
    for budget in (0, 50, 300, 1000, 5000):
        context = await memory.context("c1", "anything", budget)
        used = sum(tokens(t) + tokens(x) for t, x in context.sections)
        assert used <= budget, budget
        assert context.tokens == used
    context = await memory.context("c1", "anything", 1000)
    conversation = dict(context.sections)["Recent conversation"]
    assert conversation.splitlines()[-1].startswith("owner: message number 299 ")
    persona = dict(context.sections)["Persona"]
    assert tokens(persona) <= 300
    assert persona.endswith("…")


async def test_least_recently_used_facts_are_left_out_first(
    memory: Memory, clock: CalendarClock
) -> None:
    old = await memory.remember("the garden shed key is blue", provenance=Provenance.OWNER)
    clock.advance(200 * 86400)
    new = await memory.remember("the garden gate key is red", provenance=Provenance.OWNER)
    # Room for one fact only: the one used (here: written) more recently goes in.
    context = await memory.context("c1", "garden key", 16)
    assert getattr(new, "item_id", None) in context.item_ids
    assert getattr(old, "item_id", None) not in context.item_ids
    # Using the old one makes it the recent one.
    clock.advance(86400)
    await memory.context("c1", "shed", 2000)
    clock.advance(3600)
    context = await memory.context("c1", "garden key", 16)
    assert getattr(old, "item_id", None) in context.item_ids


async def test_an_empty_memory_gives_an_empty_context(memory: Memory) -> None:
    context = await memory.context("c1", "hello", 2000)
    assert context.sections == []
    assert context.item_ids == []
    assert context.tokens == 0
