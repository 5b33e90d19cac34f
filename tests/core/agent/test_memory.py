"""The agent with memory: conversations that continue, facts kept across restarts, facts read
from files held for the owner, /new, Undo from /memory, and the switch that turns it off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import StorageError
from core.events import Button, ButtonPress, Card, CardKind
from core.llm.types import Completion, CompletionRequest, Role
from tests.core.agent.stage import Stage, stage
from tests.fakes.owner import tap
from tests.fakes.scripted_model import call, final, text, tool_said
from tests.fakes.workspace import put


def system_of(request: CompletionRequest) -> str:
    return next(m.content for m in request.messages if m.role is Role.SYSTEM)


class Seen:
    """Steps that note the system prompt the model was given, then answer."""

    def __init__(self) -> None:
        self.systems: list[str] = []

    def answer(self, response: str, *actions: tuple[str, str]) -> object:
        def step(request: CompletionRequest) -> Completion:
            self.systems.append(system_of(request))
            return final(response, actions)

        return step

    def act(self, name: str, **arguments: object) -> object:
        def step(request: CompletionRequest) -> Completion:
            self.systems.append(system_of(request))
            return call(name, **arguments)

        return step


async def test_now_delete_it_resolves_to_the_file_of_the_turn_before(lancelot: Stage) -> None:
    seen = Seen()
    router = lancelot.model(
        seen.act("write_file", path="/workspace/groceries.txt", content="milk"),
        final("Created groceries.txt.", [("write_file", "/workspace/groceries.txt")]),
        seen.act("delete_file", path="/workspace/groceries.txt"),
        final("Deleted groceries.txt.", [("delete_file", "/workspace/groceries.txt")]),
    )
    await lancelot.say("make a groceries list with milk")
    assert (lancelot.workspace / "groceries.txt").exists()
    approval = await lancelot.say("now delete it")
    # The model saw the earlier turn, so "it" could be resolved.
    assert "make a groceries list with milk" in seen.systems[1]
    assert "groceries.txt" in seen.systems[1]
    assert approval.kind is CardKind.APPROVAL
    await tap(lancelot.app, lancelot.phone, approval, "Approve")
    reply = await lancelot.next_card()
    assert "Deleted groceries.txt." in reply.body
    assert not (lancelot.workspace / "groceries.txt").exists()
    compiled = await lancelot.receipts("context_compiled")
    assert len(compiled) == 2
    assert "milk" not in str(compiled[-1].outputs)  # ids and tokens, never the texts
    # Each model call whose prompt held the context names the same items (for its receipt).
    went_in = tuple(compiled[-1].decoded("outputs")["item_ids"])
    assert compiled[-1].decoded("outputs")["tokens_used"] > 0  # a count, not masked as a secret
    assert went_in
    notes = [c.request.context for c in router.calls if c.quest_id == compiled[-1].quest_id]
    assert notes
    assert all(n is not None and n.item_ids == went_in for n in notes)


async def test_a_remembered_fact_is_there_after_a_restart(tmp_path: Path) -> None:
    async with stage(tmp_path) as first:
        first.model(
            call("remember", text="The owner's server is called atlas."),
            final("I will remember that.", [("remember", "server is called atlas")]),
        )
        await first.say("remember that my server is called atlas")
    seen = Seen()
    async with stage(tmp_path) as second:
        second.model(seen.answer("Your server is called atlas."))
        card = await second.say("what is my server called?")
    assert "atlas" in seen.systems[0]
    assert "Your server is called atlas." in card.body


async def test_a_fact_read_from_a_file_waits_for_the_owner(lancelot: Stage) -> None:
    put(lancelot.workspace / "notes.md", "The deploy password rotates every Friday at noon.")
    seen = Seen()

    def remember_what_was_read(request: CompletionRequest) -> Completion:
        said = tool_said(request)
        return call("remember", text=said["output"].strip())

    lancelot.model(
        call("read_file", path="/workspace/notes.md"),
        remember_what_was_read,
        final("Noted (it waits for your approval).", [("read_file", "/workspace/notes.md")]),
        seen.answer("Nothing known."),
        seen.answer("It rotates every Friday at noon."),
    )
    await lancelot.say("read notes.md and remember what it says")
    await lancelot.say("when does the deploy password rotate?")
    assert "Friday at noon" not in seen.systems[0]  # held: not in the context
    shown = await lancelot.say("/memory")
    assert "Waiting for you" in shown.body
    assert "Friday at noon" in shown.body
    approved = await tap(lancelot.app, lancelot.phone, shown, "Approve H1")
    assert approved.title == "Memory"
    await lancelot.say("when does the deploy password rotate?")
    assert "Friday at noon" in seen.systems[1]


async def test_a_turn_is_kept_in_order_and_the_request_is_never_its_own_context(
    lancelot: Stage,
) -> None:
    seen = Seen()
    lancelot.model(
        seen.act("write_file", path="/workspace/a.txt", content="one"),
        final("Created a.txt.", [("write_file", "/workspace/a.txt")]),
        seen.answer("It holds one."),
    )
    await lancelot.say("create a.txt holding one")
    await lancelot.say("what does a.txt hold?")
    # The context is read while the request is being recorded: either way it leaves the
    # request out (it reaches the model once, as the new message).
    assert "create a.txt holding one" not in seen.systems[0]
    assert "what does a.txt hold?" not in seen.systems[-1]
    recent = seen.systems[-1].split("## Recent conversation\n", 1)[1].split("\n\n")[0]
    assert recent.splitlines() == [
        "owner: create a.txt holding one",
        "tool: ran: file.write /workspace/a.txt",  # from its receipt
        "agent: Done: Created a.txt.",
    ]


async def test_new_stops_earlier_turns_reaching_the_model(lancelot: Stage) -> None:
    seen = Seen()
    lancelot.model(seen.answer("Hello."), seen.answer("Hi again."), seen.answer("Hello."))
    await lancelot.say("my favourite colour is teal")
    await lancelot.say("hello again")
    assert "favourite colour is teal" in seen.systems[1]
    card = await lancelot.say("/new")
    assert card.title == "New conversation"
    await lancelot.say("hello")
    assert "favourite colour is teal" not in seen.systems[2]


async def test_undo_on_a_commit_restores_the_memory_before_it(lancelot: Stage) -> None:
    lancelot.model(
        call("remember", text="The owner prefers metric units."),
        final("Noted.", [("remember", "metric")]),
    )
    await lancelot.say("remember I prefer metric")
    found = await lancelot.say("/memory search metric")
    assert "prefers metric units" in found.body
    shown = await lancelot.say("/memory")
    undone = await tap(lancelot.app, lancelot.phone, shown, "Undo C1")
    assert undone.body.startswith("Undone")
    again = await lancelot.say("/memory search metric")
    assert "Nothing remembered matches" in again.body


async def test_with_memory_switched_off_each_message_stands_alone(tmp_path: Path) -> None:
    async with stage(tmp_path, features={"FEATURE_MEMORY": "false"}) as off:
        seen = Seen()
        off.model(seen.answer("Noted."), seen.answer("I don't know."))
        await off.say("my favourite colour is teal")
        await off.say("what is my favourite colour?")
        assert "teal" not in seen.systems[1]
        assert (await off.receipts("context_compiled")) == []
        help_card = await off.say("/help")
        assert "/memory" not in help_card.body
    assert not (tmp_path / "home" / "memory.db").exists()


async def test_a_huge_remember_is_refused_and_the_turn_answers(lancelot: Stage) -> None:
    lancelot.model(
        call("remember", text="x" * 1990 + " secret stuff"),
        lambda request: final(f"Could not: {tool_said(request)['kind']}."),
    )
    card = await lancelot.say("remember this")
    assert card.kind is CardKind.REPLY
    assert "Could not" in card.body


async def test_a_task_leaves_an_experience_that_a_later_alike_request_sees(
    lancelot: Stage,
) -> None:
    seen = Seen()
    lancelot.model(
        call("run_command", command="ls /workspace"),
        final("Listed the workspace.", [("run_command", "ls /workspace")]),
        seen.answer("Listed it before: ls /workspace."),
    )
    await lancelot.say("list the files in my workspace")
    await lancelot.say("list the files in my workspace again")
    assert "ls /workspace" in seen.systems[0]


async def test_the_deep_pass_reads_how_alike_tasks_went(tmp_path: Path) -> None:
    plan = {
        "goal": "Tidy the workspace files",
        "context": "",
        "assumptions": [],
        "plan_steps": ["List the workspace files"],
        "decision_points": [],
        "risks": [],
        "done_when": "The files are listed",
        "next_action": "List them",
    }
    async with stage(tmp_path, {"FEATURE_DEEP_REASONING_LOOP": "on"}) as lancelot:
        router = lancelot.model(
            call("run_command", command="ls /workspace"),
            final("Listed the workspace files.", [("run_command", "ls /workspace")]),
            text("Listing worked before with ls /workspace."),
            text(json.dumps(plan)),
        )
        await lancelot.say("list the files in my workspace")
        await lancelot.say("what would be a good plan to tidy the files in my workspace?")
        deep = next(c for c in router.calls if c.task_type == "deep_reasoning")
        assert "Similar past tasks" not in system_of(router.calls[0].request)
        thinking = system_of(deep.request)
        assert "How similar past tasks went" in thinking
        assert "list the files in my workspace" in thinking
        assert "ls /workspace" in thinking


async def test_a_corrupt_memory_database_stops_startup_in_one_line_and_is_kept(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    broken = home / "memory.db"
    broken.write_bytes(b"not a database, the owner's bytes" * 100)
    with pytest.raises(StorageError) as caught:
        async with stage(tmp_path):
            pass
    assert str(broken) in str(caught.value)
    assert "\n" not in str(caught.value)
    assert broken.read_bytes() == b"not a database, the owner's bytes" * 100


async def test_a_forged_memory_button_changes_nothing(lancelot: Stage) -> None:
    lancelot.model(
        call("remember", text="The owner likes tea."),
        final("Noted.", [("remember", "tea")]),
    )
    await lancelot.say("remember I like tea")
    shown = await lancelot.say("/memory")
    forged = Card(
        CardKind.REPLY,
        shown.title,
        shown.body,
        buttons=(Button("Undo C1", "A" * 32),),
        correlation_id=shown.correlation_id,
    )
    assert await tap(lancelot.app, lancelot.phone, forged, "Undo C1") is None
    refused = await lancelot.next_card()
    assert refused.title == "Button not accepted"
    found = await lancelot.say("/memory search tea")
    assert "likes tea" in found.body


async def test_forget_from_a_search_and_recall_by_the_model(lancelot: Stage) -> None:
    lancelot.model(
        call("remember", text="The owner's cat is called Miso."),
        final("Noted.", [("remember", "cat")]),
        call("recall", query="cat"),
        lambda request: final(f"Found: {tool_said(request)['output']}", [("recall", "cat")]),
    )
    await lancelot.say("remember my cat is called Miso")
    recalled = await lancelot.say("what do you know about my cat?")
    assert "Miso" in recalled.body
    found = await lancelot.say("/memory search Miso")
    forgotten = await tap(lancelot.app, lancelot.phone, found, "Forget F1")
    assert forgotten.body.startswith("Forgotten")
    again = await lancelot.say("/memory search Miso")
    assert "Nothing remembered matches" in again.body


async def test_a_task_waiting_on_an_approval_answers_after_a_restart(tmp_path: Path) -> None:
    async with stage(tmp_path) as first:
        put(first.workspace / "old.log", "x")
        first.model(call("run_command", command="rm /workspace/old.log"))
        approval = await first.say("delete old.log")
        assert approval.kind is CardKind.APPROVAL
        ref = first.phone.delivered[-1][0]
    # Lancelot stopped while the request waited; the owner taps Approve on the old card.
    async with stage(tmp_path) as second:
        seen = Seen()
        second.model(seen.answer("Deleted old.log.", ("run_command", "rm /workspace/old.log")))
        token = next(b.action_token for b in approval.buttons if b.label == "Approve")
        await second.app.bus.publish(ButtonPress("memory", "owner", "owner-chat", ref, token))
        answer = await second.next_card()
        while answer.kind is not CardKind.REPLY:
            answer = await second.next_card()
        assert not (second.workspace / "old.log").exists()
        assert "Deleted old.log." in answer.body
        assert "Correction" not in answer.body
        assert "delete old.log" in seen.systems[0] or "restarted" in seen.systems[0]
