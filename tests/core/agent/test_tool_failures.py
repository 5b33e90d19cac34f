"""A tool that fails, however it fails, is a refusal the model and the owner see; the turn
still ends with an answer."""

from __future__ import annotations

import json

from core.agent.loop import UNEXPECTED, ToolLoop
from core.agent.quest import AgentLimits, Quest
from core.agent.tools import AgentTool, ToolTable
from core.agent.trail import Trail
from core.llm.types import Completion, CompletionRequest, Message, Role, ToolSpec
from core.tools.action import ToolAction
from core.tools.definition import CONTENTS, ToolFlow
from tests.core.agent.stage import Stage
from tests.fakes.scripted_model import ScriptedRouter, call, final, text, tool_said

LONG = "/workspace/" + "a" * 300  # one name over the 255-byte limit of every file system


def report_failure(request: CompletionRequest) -> Completion:
    """A model that answers with what the tool told it."""
    said = tool_said(request)
    assert said["kind"] == "failed", said
    return final(f"That did not work: {said['reason']}")


async def test_a_name_over_255_bytes_is_refused_clearly_and_the_turn_answers(
    lancelot: Stage,
) -> None:
    lancelot.model(call("read_file", path=LONG), report_failure)
    card = await lancelot.say("read my file with the very long name")
    assert card.title == "Not done"
    assert "That did not work: file.read /workspace/aaa" in card.body
    assert "the name is too long (at most 255 bytes" in card.body
    assert "the name is too long" in dict(card.fields)["Failed"]
    (failed,) = await lancelot.receipts("tool_failed")
    assert failed.action_name == "read_file"
    assert failed.status == "failure"
    assert "too long" in (failed.error_message or "")


async def test_writing_a_long_name_is_refused_and_nothing_is_written(lancelot: Stage) -> None:
    lancelot.model(call("write_file", path=LONG, content="x"), report_failure)
    card = await lancelot.say("write a file with a very long name")
    assert "the name is too long" in card.body
    assert list(lancelot.workspace.iterdir()) == []


async def test_an_os_error_while_the_tool_runs_is_a_failed_run(lancelot: Stage) -> None:
    (lancelot.workspace / "notes").mkdir()
    lancelot.model(call("write_file", path="/workspace/notes", content="x"), report_failure)
    card = await lancelot.say("write notes")
    assert card.title == "Not done"
    assert "it is a folder, not a file" in card.body
    assert dict(card.fields)["Failed"] == "file.write /workspace/notes"
    (run,) = await lancelot.receipts("tool_run")
    assert run.status == "failure"
    assert (lancelot.workspace / "notes").is_dir()


def broken(args: dict[str, object]) -> ToolAction:
    """A tool with a bug: building its action raises something no one expected."""
    raise RuntimeError("a bug in the tool")


async def test_any_exception_from_a_tool_is_a_refusal_not_a_dead_turn(lancelot: Stage) -> None:
    governance = lancelot.app.governance
    assert governance is not None
    spec = ToolSpec(name="broken", description="always raises", parameters={"type": "object"})
    tool = AgentTool(spec, "file.read", ToolFlow(CONTENTS), broken)
    loop = ToolLoop(ToolTable([tool]), governance.gateway)
    router = ScriptedRouter([call("broken"), text("The tool broke; nothing was done.")])
    quest = Quest(router, Trail(lancelot.app.ledger, "quest-1"), "console", _idle, AgentLimits())
    result = await loop.run([Message(Role.USER, "use the broken tool")], quest)
    assert result.text == "The tool broke; nothing was done."
    told = json.loads(result.messages[2].content)
    assert told == {"kind": "failed", "reason": UNEXPECTED}
    assert quest.failures == [f"broken: {UNEXPECTED}"]
    (failed,) = await lancelot.receipts("tool_failed")
    assert failed.error_message == "RuntimeError: a bug in the tool"


async def _idle() -> None:
    return None
