"""The loop's bounds: an iteration limit, and arguments checked before anything runs."""

from __future__ import annotations

from pathlib import Path

from core.agent.quest import AgentLimits
from core.llm.types import Completion, CompletionRequest
from tests.core.agent.stage import Stage, stage
from tests.fakes.scripted_model import call, final, tool_said


async def test_the_iteration_limit_stops_a_model_that_never_finishes(lancelot: Stage) -> None:
    router = lancelot.model(
        *[call("run_command", command="ls /workspace") for _ in range(10)],
        limits=AgentLimits(max_iterations=3),
    )
    card = await lancelot.say("list my files")
    assert card.title == "Stopped at the limit"
    assert "I stopped after 3 model turns" in card.body
    assert len(await lancelot.receipts("tool_run")) == 3
    assert router.left() == 7
    assert dict(card.fields)["Ran"] == "; ".join(["ls /workspace"] * 3)


def explain_problem(request: CompletionRequest) -> Completion:
    said = tool_said(request)
    return final(f"My call was rejected: {'; '.join(said['problems'])}")


async def test_invalid_arguments_are_rejected_before_anything_runs(lancelot: Stage) -> None:
    (lancelot.workspace / "keep").mkdir()
    lancelot.model(
        call("run_command", cmd="rm -rf /workspace/keep", force=True),
        explain_problem,
    )
    card = await lancelot.say("delete the keep folder")
    assert "'command' is a required property" in card.body
    assert (lancelot.workspace / "keep").exists()
    assert await lancelot.receipts("policy_decision") == []
    assert await lancelot.receipts("approval_requested") == []
    (rejected,) = await lancelot.receipts("tool_call")
    assert rejected.status == "refused"


def after_gap(request: CompletionRequest) -> Completion:
    said = tool_said(request)
    return final(f"I have no email tool; I can use {', '.join(said['available_tools'])}.")


async def test_deep_loop_records_gaps_and_the_task_experience(tmp_path: Path) -> None:
    async with stage(tmp_path, {"FEATURE_DEEP_REASONING_LOOP": "true"}) as lancelot:
        lancelot.model(call("send_email", to="bob@example.org", body="hi"), after_gap)
        card = await lancelot.say("email bob that I am late")
        assert "I have no email tool; I can use run_command, read_file, write_file" in card.body
        (gap,) = await lancelot.receipts("capability_gap")
        assert gap.action_name == "send_email"
        (experience,) = await lancelot.receipts("task_experience")
        outcome = experience.decoded("outputs")
        assert outcome["iterations"] == 2
        assert outcome["tool_runs"] == 0


async def test_without_the_deep_loop_a_gap_is_refused_but_not_recorded(lancelot: Stage) -> None:
    lancelot.model(call("send_email", to="bob@example.org"), after_gap)
    card = await lancelot.say("email bob")
    assert "no email tool" in card.body
    assert await lancelot.receipts("capability_gap") == []
    assert await lancelot.receipts("task_experience") == []
