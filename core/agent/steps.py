"""Planner -> Executor -> Verifier: a plan carried out step by step, each step checked."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from core.agent.answer import parse_json_object
from core.agent.loop import ToolLoop
from core.agent.plan import PLAN_INSTRUCTIONS, PLAN_SCHEMA, PlanArtifact
from core.agent.quest import Quest
from core.governance.outcomes import ToolOutcome
from core.llm.types import CompletionRequest, Lane, Message, Role
from core.receipts.model import ReceiptStatus


class StepVerdict(BaseModel):
    """The verifier's judgement of one step."""

    passed: bool
    reason: str = ""


VERDICT_SCHEMA = StepVerdict.model_json_schema()


@dataclass(frozen=True, slots=True)
class StepReport:
    """How one plan step went."""

    step: str
    passed: bool
    attempts: int
    note: str


@dataclass(frozen=True, slots=True)
class Job:
    """What every step sees: the system prompt, the owner's request and the plan."""

    system: str
    request: str
    plan: PlanArtifact


class PlanError(ValueError):
    """The model's plan was not a valid PlanArtifact."""


async def make_plan(quest: Quest, system: str, text: str, insight: str | None) -> PlanArtifact:
    """Ask the model for a PlanArtifact (structured output) and record it."""
    messages = [Message(Role.SYSTEM, f"{system}\n\n{PLAN_INSTRUCTIONS}"), Message(Role.USER, text)]
    if insight:
        messages.append(Message(Role.USER, f"Notes from a first deep look:\n{insight}"))
    request = CompletionRequest(tuple(messages), json_schema=PLAN_SCHEMA, max_tokens=2048)
    completion = await quest.complete(request, "plan")
    try:
        plan = PlanArtifact.model_validate(parse_json_object(completion.text))
    except (ValidationError, ValueError) as exc:
        quest.trail.record("plan", "invalid", status=ReceiptStatus.FAILURE, error=str(exc)[:500])
        raise PlanError(str(exc)) from None
    quest.trail.record("plan", "plan", outputs=plan.model_dump())
    return plan


class StepRunner:
    """Executes each step with the tool loop and lets a sober verifier judge it."""

    def __init__(self, loop: ToolLoop) -> None:
        self._loop = loop

    async def run(
        self, quest: Quest, system: str, text: str, plan: PlanArtifact
    ) -> list[StepReport]:
        """Carry out the steps in order; stop at the first step that fails every attempt."""
        job = Job(system, text, plan)
        reports: list[StepReport] = []
        for number, step in enumerate(plan.plan_steps, 1):
            done = "".join(f"Step {n} done: {r.note}\n" for n, r in enumerate(reports, 1))
            if quest.progress is not None:
                quest.progress.step(number, len(plan.plan_steps), step)
            report = await self._step(quest, job, number, step, done)
            reports.append(report)
            if not report.passed:
                break
            if quest.progress is not None:
                quest.progress.step_done(number)
        return reports

    async def _step(self, quest: Quest, job: Job, number: int, step: str, done: str) -> StepReport:
        """Up to `step_attempts` tries, each judged by the verifier; `done` says what the
        earlier steps did."""
        plan = job.plan
        feedback = ""
        for attempt in range(1, quest.limits.step_attempts + 1):
            messages = [
                Message(Role.SYSTEM, job.system),
                Message(Role.USER, job.request),
                Message(Role.ASSISTANT, plan.model_dump_json()),
                Message(
                    Role.USER,
                    f"{done}Do step {number} of {len(plan.plan_steps)} now, and only it: "
                    f"{step}\n{feedback}Use tools as needed, then reply with one line saying what "
                    "happened.",
                ),
            ]
            result = await self._loop.run(messages, quest, task_type="execute_step")
            if result.stopped:
                return StepReport(step, False, attempt, "stopped at the iteration limit")
            verdict = await self._verify(quest, step, plan.done_when, result.text, result.outcomes)
            if verdict.passed:
                return StepReport(step, True, attempt, result.text.strip()[:300])
            feedback = f"A previous attempt did not pass the check: {verdict.reason}\n"
        return StepReport(step, False, quest.limits.step_attempts, feedback.strip())

    async def _verify(
        self, quest: Quest, step: str, done_when: str, summary: str, outcomes: list[ToolOutcome]
    ) -> StepVerdict:
        """Judge a step from the tool outcomes (not from the executor's own words alone); its
        receipt keeps them as their receipts do (a fetched page's address, not the page)."""
        evidence = [o.for_model() for o in outcomes]
        prompt = (
            f"Step: {step}\nThe whole task is done when: {done_when}\n"
            f"Executor's summary: {summary}\nTool outcomes (JSON, authoritative):\n"
            + ("\n".join(evidence) or "(no tool ran)")
            + '\nDid this step succeed? Answer JSON: {"passed": true|false, "reason": "..."}'
        )
        request = CompletionRequest(
            (Message(Role.SYSTEM, _VERIFIER), Message(Role.USER, prompt)),
            temperature=quest.limits.verifier_temperature,
            json_schema=VERDICT_SCHEMA,
            max_tokens=256,
        )
        completion = await quest.complete(request, "verify", Lane.FLAGSHIP_FAST)
        try:
            verdict = StepVerdict.model_validate(parse_json_object(completion.text))
        except (ValidationError, ValueError):
            verdict = StepVerdict(passed=False, reason="the verifier's answer was unreadable")
        quest.trail.record(
            "verify",
            "passed" if verdict.passed else "failed",
            inputs={"step": step},
            outputs={"reason": verdict.reason, "evidence": [o.for_receipt() for o in outcomes]},
            status=ReceiptStatus.SUCCESS if verdict.passed else ReceiptStatus.FAILURE,
        )
        return verdict


_VERIFIER = (
    "You verify one step of a task. Trust only the tool outcomes; a step that needed a "
    "tool and has no successful outcome did not happen. Be strict and brief."
)
