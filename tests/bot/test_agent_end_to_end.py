"""Issue 6's "Done when", end to end: the owner on a phone, the whole assembled app, and the
real OpenAI, Anthropic and Gemini SDKs talking to fake servers at the wire."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.app import Lancelot, assemble
from core.config import load_settings
from core.events import Card, CardKind
from core.features import FeatureFlags
from core.receipts.base import ReceiptQuery
from core.receipts.model import StoredReceipt
from tests.fakes.channel import MemoryChannel
from tests.fakes.llm import FakeModelServer, Reply
from tests.fakes.llm.wiring import DEEP, FAKES, FAST, base_url
from tests.fakes.owner import say, tap

PROVIDERS = sorted(FAKES)


@dataclass
class Phone:
    """The assembled app, the owner's phone, and the fake model server behind the SDK."""

    app: Lancelot
    phone: MemoryChannel
    fake: FakeModelServer

    @property
    def workspace(self) -> Path:
        return self.app.home / "workspace"

    async def say(self, text: str) -> Card:
        # A real SDK's first call on a loaded machine can take seconds: wait as next_card does.
        return await say(self.app, self.phone, text, wait=30.0)

    async def next_card(self) -> Card:
        return (await self.phone.next_card(wait=30.0))[1]  # a sandboxed command may be slow

    async def receipts(self, action_type: str) -> list[StoredReceipt]:
        """Receipts of one type, oldest first."""
        await self.app.ledger.flush()
        page = await self.app.ledger.page(ReceiptQuery(action_type=action_type, limit=200))
        return list(reversed(page.receipts))


@asynccontextmanager
async def lancelot(
    tmp_path: Path, provider: str, features: dict[str, str] | None = None
) -> AsyncIterator[Phone]:
    """Lancelot configured for `provider` as an owner would: a key and a base URL (and
    `features`: FEATURE_* switches)."""
    async with FAKES[provider]() as fake:
        env = {
            "LANCELOT_HOME": str(tmp_path / "home"),
            "LANCELOT_PROVIDER": provider,
            f"{provider.upper()}_API_KEY": "test-key",
            f"{provider.upper()}_BASE_URL": base_url(fake),
            # Model names no SDK warns about (the anthropic SDK flags retiring models).
            f"LANCELOT_LLM_{provider.upper()}_FAST_MODEL": FAST,
            f"LANCELOT_LLM_{provider.upper()}_DEEP_MODEL": DEEP,
            "LANCELOT_LLM_RETRY_BASE_SECONDS": "0.01",
            # The flagship does everything here; a local model that cannot load keeps the
            # keyword fallback quick when the flagship is down (no Gemma load in these tests).
            "LANCELOT_LOCAL_MODEL": str(tmp_path / "no-local-model.gguf"),
        }
        flags = FeatureFlags(environ={"FEATURE_UNIFIED_CLASSIFICATION": "true", **(features or {})})
        async with assemble(load_settings(environ=env), web=False, features=flags) as app:
            phone = MemoryChannel()
            await app.attach(phone)
            yield Phone(app, phone, fake)


def intent(label: str) -> Reply:
    return Reply(json={"intent": label})


def answer(text: str, actions: list[tuple[str, str]] | None = None) -> Reply:
    """The structured final answer."""
    taken = [{"tool": tool, "detail": detail} for tool, detail in actions or []]
    return Reply(json={"response_to_user": text, "actions_taken": taken, "next_action": ""})


def tool(name: str, **arguments: Any) -> Reply:
    return Reply(tool_calls=((name, arguments),))


PLAN = {
    "goal": "Clean up the old logs in the workspace",
    "context": "The owner keeps logs in /workspace.",
    "assumptions": ["old.log is the only old log"],
    "plan_steps": ["List the files in /workspace", "Delete /workspace/old.log"],
    "decision_points": ["The owner approves the deletion"],
    "risks": ["A deleted file cannot be recovered"],
    "done_when": "old.log is gone and everything else is untouched",
    "next_action": "List the workspace",
}

CLEANUP = (
    intent("MIXED_REQUEST"),
    Reply(json=PLAN),
    tool("list_files", path="/workspace"),  # step 1
    Reply(text="The workspace holds keep.txt and old.log."),
    Reply(json={"passed": True, "reason": "the listing shows old.log"}),
    tool("run_command", command="rm /workspace/old.log"),  # step 2: waits for approval
    Reply(text="Deleted old.log."),
    Reply(json={"passed": True, "reason": "rm exited 0"}),
    answer(
        "The old logs are cleaned up: old.log is deleted, keep.txt is untouched.",
        [("list_files", "/workspace"), ("run_command", "rm /workspace/old.log")],
    ),
)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_plan_approve_and_a_truthful_answer_backed_by_receipts(
    tmp_path: Path, provider: str
) -> None:
    async with lancelot(tmp_path, provider) as owner:
        (owner.workspace / "old.log").write_text("2019 lines\n")
        (owner.workspace / "keep.txt").write_text("keep me\n")
        owner.fake.reply(*CLEANUP)

        plan = await owner.say("plan the cleanup of old logs and then delete old.log")
        assert (plan.kind, plan.title) == (CardKind.NOTICE, "Plan")
        assert "1. List the files in /workspace\n2. Delete /workspace/old.log" in plan.body
        assert "anything irreversible asks you first" in dict(plan.fields)["Now"]

        approval = await owner.next_card()
        assert approval.kind is CardKind.APPROVAL
        assert "rm /workspace/old.log" in approval.body
        assert (owner.workspace / "old.log").exists()  # nothing irreversible before the tap
        await tap(owner.app, owner.phone, approval, "Approve")

        reply = await owner.next_card()
        assert not (owner.workspace / "old.log").exists()
        assert (owner.workspace / "keep.txt").read_text() == "keep me\n"
        assert reply.title == "Done"
        assert "old.log is deleted" in reply.body
        assert "Correction" not in reply.body
        assert dict(reply.fields)["Ran"] == "file.list /workspace; rm /workspace/old.log"
        await assert_linked_receipts(owner, provider)
        assert_the_model_was_told_what_ran(owner)


async def assert_linked_receipts(owner: Phone, provider: str) -> None:
    """Every step's receipt belongs to the owner's message; tokens are the ones answered."""
    quest = (await owner.receipts("inbound"))[-1].id
    decisions = await owner.receipts("router_decision")
    assert len(decisions) == len(owner.fake.requests) == len(CLEANUP)
    assert {d.decoded("metadata")["provider"] for d in decisions} == {provider}
    assert [d.token_count for d in decisions] == [i + o for i, o in owner.fake.usage_sent]
    runs = await owner.receipts("tool_run")
    assert [r.action_name for r in runs] == ["file.list", "shell.apply"]  # its dry run, applied
    (granted,) = await owner.receipts("approval_granted")
    (final,) = await owner.receipts("agent_reply")
    linked = [*decisions, *runs, granted, final]
    assert {r.quest_id for r in linked} == {quest}
    assert final.decoded("outputs")["verified_receipts"] == [r.id for r in runs]


def assert_the_model_was_told_what_ran(owner: Phone) -> None:
    """The request after the approval carried the real outcome back in the API's encoding."""
    after_rm = owner.fake.requests[6]
    told = [json.loads(result) for result in owner.fake.tool_results(after_rm)]
    assert told[-1]["kind"] == "ran"
    assert told[-1]["exit_code"] == 0
    assert told[-1]["command"] == "rm /workspace/old.log"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_claimed_deletion_without_a_tool_call_is_corrected(
    tmp_path: Path, provider: str
) -> None:
    async with lancelot(tmp_path, provider) as owner:
        (owner.workspace / "old.txt").write_text("still here")
        owner.fake.reply(
            intent("EXEC_REQUEST"),
            answer("I deleted old.txt.", [("run_command", "rm /workspace/old.txt")]),
        )
        card = await owner.say("delete old.txt")
        assert (owner.workspace / "old.txt").read_text() == "still here"
        assert card.title == "Answer"
        assert "Correction: I listed 'rm /workspace/old.txt' as done" in card.body
        assert "No action ran for this request" in card.body
        assert "Ran" not in dict(card.fields)
        assert await owner.receipts("tool_run") == []


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_provider_outage_gives_a_clear_card(tmp_path: Path, provider: str) -> None:
    async with lancelot(tmp_path, provider) as owner:
        owner.fake.go_down()
        card = await owner.say("what is in my workspace?")
        assert card.title == "Model provider unavailable"
        assert "nothing was run" in card.body
        assert "Try again in a while" in card.body
        assert len(owner.fake.requests) >= 3  # retried with backoff before giving up
        (reply,) = await owner.receipts("agent_reply")
        assert reply.status == "failure"
        assert "503" in (reply.error_message or "")
        failed = await owner.receipts("router_decision")
        assert failed
        assert {d.status for d in failed} == {"failure"}


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_write_file_arguments_survive_each_api_encoding(
    tmp_path: Path, provider: str
) -> None:
    content = 'milk\neggs "free range"\n'
    async with lancelot(tmp_path, provider) as owner:
        owner.fake.reply(
            intent("EXEC_REQUEST"),
            tool("write_file", path="/workspace/todo.txt", content=content),
            answer("I wrote todo.txt.", [("write_file", "/workspace/todo.txt")]),
        )
        card = await owner.say("create todo.txt with milk and eggs")
        assert (owner.workspace / "todo.txt").read_text() == content
        assert (card.title, dict(card.fields)["Ran"]) == ("Done", "file.write /workspace/todo.txt")
        (run,) = await owner.receipts("tool_run")
        (sha,) = run.decoded("outputs")["file_changes"].values()
        assert sha == hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_now_delete_it_through_each_sdk(tmp_path: Path, provider: str) -> None:
    """Issue 16's first "Done when": the second message refers to the first one's file."""
    async with lancelot(tmp_path, provider) as owner:
        owner.fake.reply(
            intent("EXEC_REQUEST"),
            tool("write_file", path="/workspace/groceries.txt", content="milk\n"),
            answer("Created groceries.txt.", [("write_file", "/workspace/groceries.txt")]),
            intent("EXEC_REQUEST"),
            tool("delete_file", path="/workspace/groceries.txt"),
            answer("Deleted groceries.txt.", [("delete_file", "/workspace/groceries.txt")]),
        )
        made = await owner.say("make a groceries list with milk")
        assert made.title == "Done"
        assert (owner.workspace / "groceries.txt").read_text() == "milk\n"
        seen_before = len(owner.fake.requests)
        approval = await owner.say("now delete it")
        # What the SDK sent for "now delete it" carried the earlier turn (in its encoding).
        sent = json.dumps([r.body for r in owner.fake.requests[seen_before:]])
        assert "make a groceries list with milk" in sent
        assert "Created groceries.txt." in sent
        assert approval.kind is CardKind.APPROVAL
        assert "/workspace/groceries.txt" in approval.body
        await tap(owner.app, owner.phone, approval, "Approve")
        reply = await owner.next_card()
        assert "Deleted groceries.txt." in reply.body
        assert not (owner.workspace / "groceries.txt").exists()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_remembered_name_reaches_the_model_after_a_restart(
    tmp_path: Path, provider: str
) -> None:
    async with lancelot(tmp_path, provider) as owner:
        owner.fake.reply(
            intent("EXEC_REQUEST"),
            tool("remember", text="The owner's server is called atlas."),
            answer("I'll remember that.", [("remember", "server is called atlas")]),
        )
        await owner.say("remember that my server is called atlas")
    async with lancelot(tmp_path, provider) as owner:
        owner.fake.reply(intent("KNOWLEDGE_REQUEST"), answer("Your server is called atlas."))
        card = await owner.say("what is my server called?")
        assert "atlas" in json.dumps([r.body for r in owner.fake.requests])
        assert "Your server is called atlas." in card.body
