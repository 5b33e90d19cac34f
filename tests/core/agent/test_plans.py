"""Complex requests: a plan card first, then each step executed and verified."""

from __future__ import annotations

import json
from pathlib import Path

from core.agent.quest import AgentLimits
from core.events import CardKind
from core.llm.types import Completion, CompletionRequest, Lane, Role
from tests.core.agent.stage import Stage, stage
from tests.fakes.owner import tap
from tests.fakes.scripted_model import call, final, text

PLAN = {
    "goal": "A notes folder with a readme",
    "context": "The workspace is empty.",
    "assumptions": ["The owner wants plain text."],
    "plan_steps": ["Create the folder /workspace/notes", "Create /workspace/notes/README"],
    "decision_points": [],
    "risks": ["None: nothing is deleted."],
    "done_when": "/workspace/notes/README exists",
    "next_action": "Create the folder",
}


def strict_verifier(request: CompletionRequest) -> Completion:
    """Passes a step only when a tool outcome in the evidence ran and exited 0."""
    prompt = request.messages[-1].content
    passed = '"kind": "ran"' in prompt and '"exit_code": 0' in prompt
    reason = "the tool ran and exited 0" if passed else "no successful tool outcome"
    return text(json.dumps({"passed": passed, "reason": reason}))


# PLAN carried out: each step, its summary and its check, then the final answer.
CARRY_OUT_PLAN = (
    call("run_command", command="mkdir /workspace/notes"),
    text("Created the folder."),
    strict_verifier,
    call("run_command", command="touch /workspace/notes/README"),
    text("Created the readme."),
    strict_verifier,
    final(
        "Your notes folder is ready with a README.",
        [
            ("run_command", "mkdir /workspace/notes"),
            ("run_command", "touch /workspace/notes/README"),
        ],
    ),
)


async def test_a_complex_request_shows_a_plan_then_runs_verified_steps(lancelot: Stage) -> None:
    router = lancelot.model(
        text(json.dumps(PLAN)),
        *CARRY_OUT_PLAN,
    )
    plan = await lancelot.say("plan and then create a notes folder with a readme")
    assert plan.kind is CardKind.NOTICE
    assert plan.title == "Plan"
    assert "1. Create the folder /workspace/notes" in plan.body
    assert dict(plan.fields)["Done when"] == PLAN["done_when"]
    reply = await lancelot.next_card()
    assert reply.title == "Done"
    assert (lancelot.workspace / "notes" / "README").exists()
    assert "Correction" not in reply.body
    assert [v.action_name for v in await lancelot.receipts("verify")] == ["passed", "passed"]
    assert (await lancelot.receipts("intent"))[0].action_name == "MIXED_REQUEST"
    verifier_calls = [c for c in router.calls if c.task_type == "verify"]
    assert [c.request.temperature for c in verifier_calls] == [0.1, 0.1]
    assert router.left() == 0


async def test_a_step_that_fails_three_checks_stops_the_plan(lancelot: Stage) -> None:
    attempts = []
    for _ in range(3):  # each attempt: a tool call that fails, a summary, the verifier
        attempts += [
            call("run_command", command="cat /workspace/missing.txt"),
            text("Read it."),
            strict_verifier,
        ]
    lancelot.model(
        text(json.dumps(PLAN | {"plan_steps": ["Read missing.txt", "Summarise it"]})),
        *attempts,
        final("I could not read missing.txt; it does not exist, so I stopped."),
    )
    await lancelot.say("plan it, then read missing.txt and summarise it")
    reply = await lancelot.next_card()
    verdicts = await lancelot.receipts("verify")
    assert [v.action_name for v in verdicts] == ["failed", "failed", "failed"]
    assert "could not read" in reply.body
    assert reply.title == "Not done"
    assert dict(reply.fields)["Failed"].startswith("cat /workspace/missing.txt")


async def test_a_plan_request_gets_the_plan_and_nothing_runs(lancelot: Stage) -> None:
    router = lancelot.model(text(json.dumps(PLAN)))
    plan = await lancelot.say("what would be a good plan to organise my notes?")
    assert plan.title == "Plan"
    assert [b.label for b in plan.buttons] == ["Carry it out"]
    reply = await lancelot.next_card()
    assert "nothing has been done yet" in reply.body
    assert "Tap “Carry it out”" in dict(reply.fields).get("Next", reply.body)
    assert await lancelot.receipts("tool_run") == []
    (plan_receipt,) = await lancelot.receipts("plan")
    assert plan_receipt.decoded("outputs")["goal"] == PLAN["goal"]
    assert router.calls[0].request.json_schema is not None
    assert router.calls[0].request.messages[0].role is Role.SYSTEM


async def test_the_plan_card_carries_the_plan_out_when_tapped(lancelot: Stage) -> None:
    router = lancelot.model(
        text(json.dumps(PLAN)),
        *CARRY_OUT_PLAN,  # on the tap
    )
    plan = await lancelot.say("what would be a good plan for a notes folder with a readme?")
    await lancelot.next_card()  # "That is the plan; nothing has been done yet."
    assert not (lancelot.workspace / "notes").exists()
    edited = await tap(lancelot.app, lancelot.phone, plan, "Carry it out")
    assert edited is not None
    assert edited.buttons == ()
    assert dict(edited.fields)["Now"].startswith("carrying it out")
    reply = await lancelot.next_card()
    assert reply.title == "Done"
    assert (lancelot.workspace / "notes" / "README").exists()
    assert [v.action_name for v in await lancelot.receipts("verify")] == ["passed", "passed"]
    (press,) = await lancelot.receipts("button")
    requests = await lancelot.receipts("agent_request")
    assert requests[-1].parent_id == press.id
    assert router.left() == 0
    # The plan ran once: a second tap on the same card is refused.
    await tap(lancelot.app, lancelot.phone, plan, "Carry it out")
    refused = await lancelot.next_card()
    assert refused.title == "Button not accepted"
    assert len(await lancelot.receipts("tool_run")) == 2


async def test_the_deep_loop_thinks_before_it_plans(tmp_path: Path) -> None:
    async with stage(tmp_path, {"FEATURE_DEEP_REASONING_LOOP": "on"}) as lancelot:
        router = lancelot.model(
            text("Unknown: whether notes/ exists. Risk: none, nothing is deleted."),
            text(json.dumps(PLAN)),
        )
        await lancelot.say("what would be a good plan to organise my notes?")
        await lancelot.next_card()
        deep, planning = router.calls[0], router.calls[1]
        assert (deep.lane, deep.task_type) == (Lane.FLAGSHIP_DEEP, "deep_reasoning")
        assert "whether notes/ exists" in planning.request.messages[-1].content
        (notes,) = await lancelot.receipts("deep_reasoning")
        assert "Risk: none" in notes.decoded("outputs")["notes"]
        assert len(await lancelot.receipts("task_experience")) == 1


async def test_the_iteration_limit_also_bounds_a_plan(lancelot: Stage) -> None:
    lancelot.model(
        text(json.dumps(PLAN)),
        *[call("run_command", command="ls /workspace") for _ in range(5)],
        limits=AgentLimits(max_iterations=2),
    )
    await lancelot.say("plan and then create a notes folder with a readme")
    reply = await lancelot.next_card()
    assert reply.title == "Stopped at the limit"
    assert len(await lancelot.receipts("tool_run")) == 2
    assert await lancelot.receipts("verify") == []
