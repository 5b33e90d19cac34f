"""Scripted conversations with the agent, as the owner sees them: cards, files, receipts."""

from __future__ import annotations

import asyncio

from core.errors import ProviderUnavailable
from core.events import CardKind
from core.governance.approvals import ApprovalState, ApprovalStore
from core.llm.types import Completion, CompletionRequest
from tests.core.agent.stage import Stage
from tests.fakes.owner import tap
from tests.fakes.scripted_model import call, final, tool_said


async def test_a_question_is_answered_with_linked_receipts(lancelot: Stage) -> None:
    lancelot.model(final("A receipt is a tamper-evident record of one action."))
    card = await lancelot.say("what is a receipt?")
    assert card.title == "Answer"
    assert "tamper-evident record" in card.body
    inbound = (await lancelot.receipts("inbound"))[-1]
    request = (await lancelot.receipts("agent_request"))[-1]
    assert request.parent_id == inbound.id
    for kind in ("intent", "agent_reply"):
        (receipt,) = await lancelot.receipts(kind)
        assert receipt.parent_id == request.id
        assert receipt.quest_id == inbound.id
    assert (await lancelot.receipts("intent"))[0].action_name == "KNOWLEDGE_REQUEST"


def report_listing(request: CompletionRequest) -> Completion:
    """A model that reports what the tool really printed."""
    said = tool_said(request)
    return final(f"Files: {said['output']}", [("run_command", "ls /workspace")])


async def test_a_tool_call_runs_in_the_workspace(lancelot: Stage) -> None:
    (lancelot.workspace / "notes.txt").write_text("hello")
    lancelot.model(call("run_command", command="ls /workspace"), report_listing)
    card = await lancelot.say("list the files in my workspace")
    assert card.title == "Done"
    assert "notes.txt" in card.body
    assert dict(card.fields)["Ran"] == "ls /workspace"
    assert "Correction" not in card.body
    (tool_call,) = await lancelot.receipts("tool_call")
    children = await lancelot.app.ledger.children(tool_call.id)
    assert [c.action_type for c in children] == ["policy_decision", "tool_run"]
    assert all(c.quest_id == tool_call.quest_id for c in children)


def after_decision(request: CompletionRequest) -> Completion:
    """Reports a deletion only if it ran; otherwise adapts to what the owner decided."""
    said = tool_said(request)
    if said["kind"] == "ran" and said.get("exit_code") == 0:
        return final("Deleted old.txt.", [("run_command", "rm /workspace/old.txt")])
    if said["kind"] == "not_approved":
        return final(
            "You declined, so old.txt stays.",
            next_action="I could move it to /workspace/trash instead.",
        )
    if said["kind"] == "expired":
        return final("Nobody approved in time, so nothing was deleted.")
    return final(f"Unexpected: {said}")


async def test_t3_call_waits_for_approve_and_resumes(lancelot: Stage) -> None:
    (lancelot.workspace / "old.txt").write_text("bye")
    lancelot.model(call("run_command", command="rm /workspace/old.txt"), after_decision)
    approval = await lancelot.say("delete old.txt")
    assert approval.kind is CardKind.APPROVAL
    assert "rm /workspace/old.txt" in approval.body
    assert (lancelot.workspace / "old.txt").exists()  # nothing runs before the tap
    await tap(lancelot.app, lancelot.phone, approval, "Approve")
    reply = await lancelot.next_card()
    assert not (lancelot.workspace / "old.txt").exists()
    assert reply.title == "Done"
    assert "Deleted old.txt." in reply.body
    assert "Correction" not in reply.body
    assert dict(reply.fields)["Ran"] == "rm /workspace/old.txt"
    (run,) = await lancelot.receipts("tool_run")
    assert run.quest_id == (await lancelot.receipts("inbound"))[-1].id


async def test_t3_call_denied_and_the_model_adapts(lancelot: Stage) -> None:
    (lancelot.workspace / "old.txt").write_text("keep me")
    lancelot.model(call("run_command", command="rm /workspace/old.txt"), after_decision)
    approval = await lancelot.say("delete old.txt")
    await tap(lancelot.app, lancelot.phone, approval, "Deny")
    reply = await lancelot.next_card()
    assert (lancelot.workspace / "old.txt").read_text() == "keep me"
    assert reply.title == "Answer"
    assert "You declined" in reply.body
    assert "trash" in dict(reply.fields)["Next"]
    assert await lancelot.receipts("tool_run") == []


def work_around(request: CompletionRequest) -> Completion:
    """Reads the refusal and takes the alternative it offers (move to a trash folder)."""
    said = tool_said(request)
    assert said["kind"] == "denied", said
    if any("trash" in alternative for alternative in said["alternatives"]):
        return call("run_command", command="mkdir /workspace/trash")
    return final("Refused, and I see no alternative.")


async def test_a_denylisted_call_is_refused_and_the_model_works_around_it(
    lancelot: Stage,
) -> None:
    (lancelot.workspace / "junk.txt").write_text("x")
    lancelot.model(
        call("run_command", command="rm -rf /"),
        work_around,
        call("run_command", command="mv /workspace/junk.txt /workspace/trash/junk.txt"),
        final(
            "Deleting everything is not allowed, so I moved junk.txt to /workspace/trash.",
            [
                ("run_command", "mkdir /workspace/trash"),
                ("run_command", "mv /workspace/junk.txt /workspace/trash/junk.txt"),
            ],
        ),
    )
    card = await lancelot.say("delete everything")
    assert (lancelot.workspace / "trash" / "junk.txt").exists()
    assert card.title == "Done"
    assert "Correction" not in card.body
    decisions = await lancelot.receipts("policy_decision")
    assert [d.action_name for d in decisions] == ["deny", "allow", "allow"]
    runs = await lancelot.receipts("tool_run")
    assert [r.decoded("inputs")["command"] for r in runs] == [
        "mkdir /workspace/trash",
        "mv /workspace/junk.txt /workspace/trash/junk.txt",
    ]


async def test_an_outage_fails_clearly(lancelot: Stage) -> None:
    lancelot.model(ProviderUnavailable("openai: 503 after 3 tries"))
    card = await lancelot.say("what is the capital of France?")
    assert card.title == "Model provider unavailable"
    assert "nothing was run" in card.body
    (reply,) = await lancelot.receipts("agent_reply")
    assert reply.status == "failure"
    assert "503" in (reply.error_message or "")


async def test_an_outage_after_a_tool_ran_lists_what_ran(lancelot: Stage) -> None:
    lancelot.model(
        call("run_command", command="ls /workspace"), ProviderUnavailable("anthropic: 529")
    )
    card = await lancelot.say("list my files")
    assert card.title == "Model provider unavailable"
    assert dict(card.fields)["Ran"] == "ls /workspace"


async def test_a_claimed_action_without_a_receipt_is_corrected(lancelot: Stage) -> None:
    (lancelot.workspace / "old.txt").write_text("still here")
    lancelot.model(final("I deleted old.txt.", [("run_command", "rm /workspace/old.txt")]))
    card = await lancelot.say("delete old.txt")
    assert (lancelot.workspace / "old.txt").exists()
    assert card.title == "Answer"
    assert "Correction: I listed 'rm /workspace/old.txt' as done" in card.body
    assert "No action ran for this request" in card.body
    assert "Ran" not in dict(card.fields)
    (reply,) = await lancelot.receipts("agent_reply")
    outputs = reply.decoded("outputs")
    assert outputs["actions_taken"] == []
    assert len(outputs["corrections"]) == 2


async def test_simulated_progress_is_blocked(lancelot: Stage) -> None:
    lancelot.model(
        final(
            "I'm working on it and I'll get back to you shortly. Python 3.11 added TaskGroup.",
            next_action="I'll let you know when it is done.",
        )
    )
    card = await lancelot.say("what did python 3.11 add?")
    assert "working on it" not in card.body
    assert "get back to you" not in card.body
    assert "Python 3.11 added TaskGroup." in card.body
    assert "Nothing is running in the background" in card.body
    assert "Next" not in dict(card.fields)
    (reply,) = await lancelot.receipts("agent_reply")
    assert len(reply.decoded("outputs")["blocked_phrases"]) == 3


async def test_status_is_answered_while_the_agent_waits_for_approval(lancelot: Stage) -> None:
    (lancelot.workspace / "old.txt").write_text("bye")
    lancelot.model(call("run_command", command="rm /workspace/old.txt"), after_decision)
    approval = await lancelot.say("delete old.txt")
    assert approval.kind is CardKind.APPROVAL
    started = asyncio.get_running_loop().time()
    status = await lancelot.say("/status")
    assert asyncio.get_running_loop().time() - started < 1.0
    assert "Receipts" in dict(status.fields)
    assert (lancelot.workspace / "old.txt").exists()  # the agent is still waiting
    await tap(lancelot.app, lancelot.phone, approval, "Approve")
    assert (await lancelot.next_card()).title == "Done"


async def test_an_expired_approval_comes_back_to_the_model(lancelot: Stage) -> None:
    (lancelot.workspace / "old.txt").write_text("bye")
    lancelot.model(call("run_command", command="rm /workspace/old.txt"), after_decision)
    approval = await lancelot.say("delete old.txt")
    [pending] = await ApprovalStore(lancelot.app.state).in_states(ApprovalState.PENDING)
    # As if 30 minutes passed: the late tap finds the deadline gone.
    await lancelot.app.state.execute(
        "UPDATE approvals SET expires_at = 0 WHERE id = ?", (pending.id,)
    )
    await tap(lancelot.app, lancelot.phone, approval, "Approve")
    reply = await lancelot.next_card()
    assert "Nobody approved in time" in reply.body
    assert (lancelot.workspace / "old.txt").exists()
    assert await lancelot.receipts("tool_run") == []


async def test_the_owner_sees_typing_while_the_model_works(lancelot: Stage) -> None:
    router = lancelot.model(call("run_command", command="ls /workspace"), report_listing)
    before = lancelot.phone.typing_count
    await lancelot.say("list the files in my workspace")
    assert lancelot.phone.typing_count - before >= len(router.calls)
