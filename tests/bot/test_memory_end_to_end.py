"""Issue 16's "Done when" through each provider's real SDK against its wire fake: a fact read
from a file waits in quarantine and reaches the model only after Approve; Undo on its commit
takes it back out; /new stops earlier turns reaching the model; with FEATURE_MEMORY off each
message stands alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bot.test_agent_end_to_end import PROVIDERS, Phone, answer, intent, lancelot, tool
from tests.fakes.owner import tap
from tests.fakes.workspace import put

FACT = "The backup server restarts every Friday at noon."
QUESTION = "when does the backup server restart?"


async def sent_for(owner: Phone, text: str) -> str:
    """Everything the SDK sent to the model while Lancelot handled `text` (a question the
    model answers at once)."""
    before = len(owner.fake.requests)
    owner.fake.reply(intent("KNOWLEDGE_REQUEST"), answer("Here is what I know."))
    card = await owner.say(text)
    assert card.body == "Here is what I know."
    return json.dumps([r.body for r in owner.fake.requests[before:]])


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_read_fact_waits_for_approve_and_undo_takes_it_back(
    tmp_path: Path, provider: str
) -> None:
    async with lancelot(tmp_path, provider) as owner:
        put(owner.workspace / "notes.md", FACT + "\n")
        owner.fake.reply(
            intent("EXEC_REQUEST"),
            tool("read_file", path="/workspace/notes.md"),
            tool("remember", text=FACT),
            answer("Noted; it waits for your approval.", [("read_file", "/workspace/notes.md")]),
        )
        await owner.say("read notes.md and remember what it says")
        assert "every Friday at noon" not in await sent_for(owner, QUESTION)  # held
        shown = await owner.say("/memory")
        assert FACT in shown.body
        await tap(owner.app, owner.phone, shown, "Approve H1")
        assert "every Friday at noon" in await sent_for(owner, QUESTION)  # approved: in
        shown = await owner.say("/memory")
        undone = await tap(owner.app, owner.phone, shown, "Undo C1")
        assert undone is not None
        assert undone.body.startswith("Undone")
        assert "every Friday at noon" not in await sent_for(owner, QUESTION)  # undone: out


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_new_stops_earlier_turns_reaching_the_model(tmp_path: Path, provider: str) -> None:
    async with lancelot(tmp_path, provider) as owner:
        await sent_for(owner, "my favourite colour is teal")
        assert "favourite colour is teal" in await sent_for(owner, "hello again")
        started = await owner.say("/new")
        assert started.title == "New conversation"
        assert "favourite colour is teal" not in await sent_for(owner, "hello")


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_with_memory_off_each_message_stands_alone(tmp_path: Path, provider: str) -> None:
    async with lancelot(tmp_path, provider, {"FEATURE_MEMORY": "false"}) as owner:
        await sent_for(owner, "my favourite colour is teal")
        assert "favourite colour is teal" not in await sent_for(owner, "what is my colour?")
        assert not (owner.app.home / "memory.db").exists()
