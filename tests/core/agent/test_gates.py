"""The honesty gate and the response governor on their own."""

from __future__ import annotations

import asyncio

from core.agent.answer import ActionClaim, FinalAnswer, parse_final
from core.agent.governor import govern
from core.agent.honesty import ToolRun, check_answer, runs_on_record

TOOLS = {"run_command": "shell.exec"}


def answer(text: str, *claims: str) -> FinalAnswer:
    return FinalAnswer(
        response_to_user=text,
        actions_taken=[ActionClaim(tool="run_command", detail=c) for c in claims],
    )


def test_a_claim_backed_by_a_successful_receipt_is_kept() -> None:
    runs = [ToolRun("r1", "shell.exec", "rm /workspace/old.txt", succeeded=True)]
    checked = check_answer(answer("Deleted it.", "rm /workspace/old.txt"), runs, TOOLS)
    assert checked.corrections == ()
    assert [r.receipt_id for r in checked.verified] == ["r1"]


def test_a_claim_of_a_failed_run_is_corrected() -> None:
    runs = [ToolRun("r1", "shell.exec", "cat /workspace/missing.txt", succeeded=False)]
    checked = check_answer(answer("Read it.", "cat /workspace/missing.txt"), runs, TOOLS)
    assert checked.answer.actions_taken == []
    assert "no receipt shows it ran" in checked.corrections[0]


def test_a_claim_for_another_command_or_target_is_corrected() -> None:
    runs = [ToolRun("r1", "shell.exec", "rm /workspace/old.txt", succeeded=True)]
    assert check_answer(answer("Done.", "rm /workspace/old"), runs, TOOLS).corrections
    assert check_answer(answer("Done.", "rm -rf /workspace/old.txt"), runs, TOOLS).corrections
    assert check_answer(answer("Done.", "rm old.txt"), runs, TOOLS).corrections == ()


def test_claims_in_prose_without_any_run_are_corrected_but_refusals_are_not() -> None:
    assert check_answer(answer("I've deleted the old logs."), [], TOOLS).corrections
    assert check_answer(answer("I can't delete that without a tool."), [], TOOLS).corrections == ()


def test_a_prose_claim_needs_a_run_of_its_kind() -> None:
    listed = [ToolRun("r1", "shell.exec", "ls /workspace", succeeded=True)]
    corrected = check_answer(answer("I looked, and I deleted old.txt."), listed, TOOLS)
    assert corrected.corrections == (
        "I said I deleted something, but no receipt shows that; it was not done.",
    )
    removed = [ToolRun("r2", "shell.exec", "rm /workspace/old.txt", succeeded=True)]
    assert check_answer(answer("I deleted old.txt."), removed, TOOLS).corrections == ()
    assert check_answer(answer("I ran ls for you."), listed, TOOLS).corrections == ()


def test_progress_language_is_kept_only_while_a_job_runs() -> None:
    text = "On it.\nI'm working on it.\n\nThe answer is 4. I'll get back to you."
    assert govern(text, job_running=True).text == text
    governed = govern(text, job_running=False)
    assert governed.text == "On it.\n\nThe answer is 4."
    assert len(governed.blocked) == 2


def test_final_answers_are_read_from_fenced_json_and_junk_is_refused() -> None:
    fenced = '```json\n{"response_to_user": "hi", "actions_taken": []}\n```'
    assert parse_final(fenced) == FinalAnswer(response_to_user="hi")
    assert parse_final("just prose") is None
    assert parse_final('{"actions_taken": []}') is None


async def test_an_answer_with_no_run_does_not_wait_for_the_ledger() -> None:
    class Ledger:
        """A ledger whose pending batch never lands."""

        flushed = 0

        async def flush(self) -> None:
            self.flushed += 1
            await asyncio.Event().wait()

    ledger = Ledger()
    assert await asyncio.wait_for(runs_on_record(ledger, [], lambda _: ()), 1) == []  # type: ignore[arg-type]
    assert ledger.flushed == 0
