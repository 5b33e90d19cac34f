"""The model's file and repository tools: validated, governed, and truthfully reported."""

from __future__ import annotations

import hashlib
import json
import subprocess

from core.events import CardKind
from core.llm.types import Completion, CompletionRequest
from tests.core.agent.stage import Stage
from tests.fakes.owner import tap
from tests.fakes.scripted_model import call, final, tool_said

OFFERED = {
    "run_command",
    "read_file",
    "write_file",
    "list_files",
    "delete_file",
    "move_file",
    "repo_status",
    "repo_diff",
    "remember",
    "recall",
    "forget",
    "propose_job",
    "send_file",
}


def quote_notes(request: CompletionRequest) -> Completion:
    """A model that answers from what read_file really returned."""
    said = tool_said(request)
    assert said["kind"] == "ran", said
    return final(f"Your notes say: {said['output']}", [("read_file", "/workspace/notes.txt")])


async def test_the_model_reads_a_file(lancelot: Stage) -> None:
    (lancelot.workspace / "notes.txt").write_text("buy milk")
    model = lancelot.model(call("read_file", path="/workspace/notes.txt"), quote_notes)
    card = await lancelot.say("what do my notes say?")
    assert {spec.name for spec in model.calls[-1].request.tools} == OFFERED
    assert card.title == "Done"
    assert "Your notes say: buy milk" in card.body
    assert "Correction" not in card.body
    assert dict(card.fields)["Ran"] == "file.read /workspace/notes.txt"
    (decision,) = await lancelot.receipts("policy_decision")
    assert decision.decoded("metadata")["tier"] == "T0"
    (run,) = await lancelot.receipts("tool_run")
    assert run.action_name == "file.read"
    assert run.quest_id == (await lancelot.receipts("inbound"))[-1].id


async def test_the_model_writes_a_file_and_the_receipt_holds_its_hash(lancelot: Stage) -> None:
    content = "milk\neggs\n"
    lancelot.model(
        call("write_file", path="/workspace/todo.txt", content=content),
        final("I wrote todo.txt with two items.", [("write_file", "/workspace/todo.txt")]),
    )
    card = await lancelot.say("create todo.txt with milk and eggs")
    assert (lancelot.workspace / "todo.txt").read_text() == content
    assert card.title == "Done"
    assert "Correction" not in card.body
    assert dict(card.fields)["Ran"] == "file.write /workspace/todo.txt"
    (run,) = await lancelot.receipts("tool_run")
    assert run.action_name == "file.write"
    changes = run.decoded("outputs")["file_changes"]
    assert list(changes.values()) == [hashlib.sha256(content.encode()).hexdigest()]
    assert run.decoded("metadata")["tier"] == "T1"


def after_delete(request: CompletionRequest) -> Completion:
    """Reports the deletion only if the tool says it ran."""
    said = tool_said(request)
    if said["kind"] == "ran" and said.get("exit_code") == 0:
        return final("Deleted old.log.", [("delete_file", "/workspace/old.log")])
    return final(f"Nothing was deleted ({said['kind']}).")


async def test_delete_file_waits_for_approval_then_runs(lancelot: Stage) -> None:
    (lancelot.workspace / "old.log").write_text("old lines")
    lancelot.model(call("delete_file", path="/workspace/old.log"), after_delete)
    approval = await lancelot.say("delete old.log")
    assert approval.kind is CardKind.APPROVAL
    assert "deletes a file: /workspace/old.log" in approval.body
    assert "/workspace/old.log" in approval.body
    assert (lancelot.workspace / "old.log").exists()  # nothing runs before the tap
    await tap(lancelot.app, lancelot.phone, approval, "Approve")
    reply = await lancelot.next_card()
    assert not (lancelot.workspace / "old.log").exists()
    assert reply.title == "Done"
    assert "Deleted old.log." in reply.body
    assert "Correction" not in reply.body
    assert dict(reply.fields)["Ran"] == "file.delete /workspace/old.log"
    (granted,) = await lancelot.receipts("approval_granted")
    (run,) = await lancelot.receipts("tool_run")
    assert run.quest_id == granted.quest_id == (await lancelot.receipts("inbound"))[-1].id


def explain_refusal(request: CompletionRequest) -> Completion:
    """Repeats the validator's problems, so the test can see what the model was told."""
    said = tool_said(request)
    return final(f"My call was rejected: {json.dumps(said)}")


async def test_arguments_are_validated_before_anything_runs(lancelot: Stage) -> None:
    lancelot.model(
        call("write_file", path="/workspace/x.txt", overwrites=False),  # no content, a fact
        explain_refusal,
    )
    card = await lancelot.say("create x.txt")
    assert not (lancelot.workspace / "x.txt").exists()
    assert "invalid arguments" in card.body
    assert "'content' is a required property" in card.body
    assert "'overwrites' was unexpected" in card.body
    assert await lancelot.receipts("policy_decision") == []
    (refused,) = await lancelot.receipts("tool_call")
    assert refused.status == "refused"


async def test_repo_status_and_diff_are_read_only_looks(lancelot: Stage) -> None:
    repo = lancelot.workspace
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    (repo / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    (repo / "a.txt").write_text("two\n")
    lancelot.model(
        call("repo_status"),
        call("repo_diff"),
        lambda request: final(f"Diff: {tool_said(request)['output']}"),
    )
    card = await lancelot.say("what changed in my repo?")
    assert "+two" in card.body
    assert dict(card.fields)["Ran"] == "repo.status /workspace; repo.diff /workspace"
    runs = await lancelot.receipts("tool_run")
    assert [r.action_name for r in runs] == ["repo.status", "repo.diff"]
    assert "M a.txt" in runs[0].decoded("outputs")["output"]
    assert {r.decoded("metadata")["tier"] for r in runs} == {"T0"}


async def test_an_overwrite_asks_then_keeps_a_backup_that_undo_restores(lancelot: Stage) -> None:
    notes = lancelot.workspace / "notes.txt"
    notes.write_text("the owner's list\n")
    lancelot.model(
        call("write_file", path="/workspace/notes.txt", content="a new list\n"),
        final("I rewrote notes.txt.", [("write_file", "/workspace/notes.txt")]),
    )
    approval = await lancelot.say("rewrite notes.txt as a new list")
    assert approval.kind is CardKind.APPROVAL
    assert notes.read_text() == "the owner's list\n"  # nothing before the tap
    await tap(lancelot.app, lancelot.phone, approval, "Approve")
    await lancelot.next_card()
    assert notes.read_text() == "a new list\n"
    (run,) = await lancelot.receipts("tool_run")
    assert run.decoded("metadata")["tier"] == "T3"
    listing = await lancelot.say("/undo")
    assert "write /workspace/notes.txt" in listing.body
    assert "$ write" not in listing.body  # a file tool's change is not shown as a command
    undone = await tap(lancelot.app, lancelot.phone, listing, "Undo 1")
    assert undone is not None
    assert undone.title == "Undone", undone.body
    assert notes.read_text() == "the owner's list\n"
    (receipt,) = await lancelot.receipts("change_undone")
    assert receipt.status == "success"
