"""Working memory and task experiences: a task waiting on an approval outlives a restart, and
what was done for a request comes back for a similar one."""

from __future__ import annotations

import pytest

from core.memory import Memory, MemoryStore
from core.receipts.ledger import SqliteLedger
from tests.core.memory.conftest import Home
from tests.fakes.calendar import CalendarClock


async def test_a_task_waiting_on_an_approval_is_found_after_a_restart(
    home: Home, ledger: SqliteLedger, clock: CalendarClock
) -> None:
    memory = home.memory
    await memory.set_task("c1", "delete old logs", plan=["list logs", "delete them"])
    task = await memory.set_task(
        "c1", "delete old logs", plan=["list logs", "delete them"],
        steps=["listed 3 logs"], approval_id="ap-1", quest_id="q-7",
    )  # fmt: skip
    assert task.steps == ("listed 3 logs",)
    await memory.store.close()  # as a kill -9 would: every write was committed when made

    async with MemoryStore(home.path) as store:
        again = Memory(store, ledger, clock=clock)
        waiting = await again.task_waiting_on("ap-1")
        assert waiting is not None
        assert (waiting.chat, waiting.request, waiting.quest_id) == ("c1", "delete old logs", "q-7")
        assert waiting.plan == ("list logs", "delete them")
        assert await again.task_waiting_on("ap-2") is None
        finished = await again.finish_task("c1")
        assert finished == waiting
        assert await again.task("c1") is None
        assert await again.finish_task("c1") is None


async def test_a_new_request_restarts_the_task_clock(memory: Memory, clock: CalendarClock) -> None:
    first = await memory.set_task("c1", "one thing")
    clock.advance(60)
    same = await memory.set_task("c1", "one thing", steps=["did it"])
    assert same.started_at == first.started_at
    assert same.updated_at == first.started_at + 60
    other = await memory.set_task("c1", "another thing")
    assert other.started_at == first.started_at + 60
    assert other.steps == ()


async def test_secrets_in_a_task_are_masked(memory: Memory) -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    task = await memory.set_task("c1", f"use {key} to list buckets", steps=[f"tried {key}"])
    assert key not in task.request
    assert key not in task.steps[0]


async def test_similar_requests_find_past_experiences(memory: Memory) -> None:
    await memory.record_experience(
        "convert the invoices folder to PDF",
        ["list invoices", "convert each with pandoc"],
        ["no pandoc in the sandbox"],
        ["tool_run ls invoices", "tool_run pandoc (failed)"],
        "failed: pandoc missing",
        4200,
    )
    await memory.record_experience("water the plants", [], [], [], "reminded the owner", 10)
    (found,) = await memory.similar_experiences("please convert these invoices to pdf")
    assert found.gaps == ("no pandoc in the sandbox",)
    assert found.plan == ("list invoices", "convert each with pandoc")
    assert found.outcome == "failed: pandoc missing"
    assert await memory.similar_experiences("the of a") == []
    context = await memory.context("c1", "convert invoices to PDF again", 2000)
    similar = dict(context.sections)["Similar past tasks"]
    assert "pandoc missing" in similar
    assert "Missing: no pandoc in the sandbox" in similar
    assert found.id in context.item_ids


async def test_the_task_goes_into_the_context(memory: Memory) -> None:
    await memory.set_task("c1", "rename the report", plan=["find it", "rename"], approval_id="ap-9")
    context = await memory.context("c1", "how is it going?", 2000)
    text = dict(context.sections)["Current task"]
    assert text.startswith("Request: rename the report")
    assert "Waiting for the owner's approval (ap-9)." in text
    assert "task:c1" in context.item_ids
    await memory.finish_task("c1")
    context = await memory.context("c1", "how is it going?", 2000)
    assert "Current task" not in dict(context.sections)


async def test_the_context_does_not_repeat_the_request_just_recorded(home: Home) -> None:
    memory = home.memory
    await memory.record_turn("c1", "owner", "create a.txt")
    await memory.record_turn("c1", "agent", "Done.")
    await memory.record_turn("c1", "owner", "now delete it")
    context = await memory.context("c1", "now delete it", 2000)
    assert dict(context.sections)["Recent conversation"] == "owner: create a.txt\nagent: Done."


async def test_the_end_of_a_turn_ends_the_task_and_records_the_answer_in_one_commit(
    home: Home, ledger: SqliteLedger, clock: CalendarClock
) -> None:
    memory = home.memory
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    await memory.set_task("c1", "list the logs", approval_id="ap-1")
    await memory.end_turn("c1", [("tool", "ran: ls logs"), ("agent", f"Listed them with {key}")])
    await memory.store.close()

    async with MemoryStore(home.path) as store:
        again = Memory(store, ledger, clock=clock)
        assert await again.task("c1") is None
        said = [(t.role, t.text) for t in await again.conversation("c1")]
        assert said == [("tool", "ran: ls logs"), ("agent", "Listed them with [REDACTED]")]


async def test_a_turn_end_with_a_bad_role_changes_nothing(memory: Memory) -> None:
    await memory.set_task("c1", "list the logs")
    with pytest.raises(ValueError, match="system"):
        await memory.end_turn("c1", [("agent", "fine"), ("system", "no")])  # type: ignore[list-item]
    assert await memory.task("c1") is not None
    assert await memory.conversation("c1") == []
