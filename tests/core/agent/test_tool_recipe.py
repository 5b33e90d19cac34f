"""docs/architecture.md, "How to add a tool", done exactly as written: a tool is its
definition and its provider, and nothing else. `pin_note` pins a note on a board (kept here
in a list, as a remote noticeboard would keep it). Once defined, the model is offered it,
governance gives it the definition's tier (the Soul has no rule for it), the flow rules see
the text it sends out and the board it changes, and a run leaves its receipts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from core.config import load_settings
from core.errors import ToolFailed
from core.features import FeatureFlags
from core.governance.flow import ASK_MARK
from core.tools.action import ToolAction
from core.tools.base import CommandRunner, ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.definition import NOTHING, Provider, ProviderKit, ToolDefinition, ToolFlow
from tests.core.agent.stage import Stage
from tests.fakes.scripted_model import call, final
from tests.fakes.workspace import put

PIN = "noticeboard.pin"


# 1. The provider: a CommandRunner for the tool's capability.
class Noticeboard:
    """Pins notes on boards; only with the capability token governance issued."""

    name = "noticeboard"

    def __init__(self, capabilities: CapabilityTokens, boards: list[tuple[str, str]]) -> None:
        self._capabilities = capabilities
        self._boards = boards

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Pin the action's text on its board."""
        self._capabilities.check(capability, action.digest)
        if action.capability != PIN:
            raise ToolFailed(f"the noticeboard does not serve {action.capability}")
        board, text = str(action.params["board"]), str(action.params["text"])
        self._boards.append((board, text))
        return ToolResult(0, f"pinned {len(text)} characters on {board}")


# 2. The definition: name, capability, schema, flow, default tier, provider.
def pin_note(boards: list[tuple[str, str]]) -> ToolDefinition:
    """The pin_note tool, pinning onto `boards`."""

    def build(kit: ProviderKit) -> CommandRunner:
        return Noticeboard(kit.capabilities, boards)

    return ToolDefinition(
        name="pin_note",
        capability=PIN,
        description="Pin a short note on one of the owner's noticeboards.",
        parameters={
            "type": "object",
            "properties": {
                "board": {"type": "string", "minLength": 1, "maxLength": 40},
                "text": {"type": "string", "minLength": 1, "maxLength": 500},
            },
            "required": ["board", "text"],
            "additionalProperties": False,
        },
        flow=ToolFlow(NOTHING, sends=("text",), changes=("board",)),
        tier="T1",
        provider=Provider(build),
    )


@asynccontextmanager
async def with_pin_note(tmp_path: Path) -> AsyncIterator[tuple[Stage, list[tuple[str, str]]]]:
    """Lancelot with pin_note defined, and the boards it pins on."""
    boards: list[tuple[str, str]] = []
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home")})
    running = Stage(settings, FeatureFlags(environ={}), (pin_note(boards),))
    await running.start()
    try:
        yield running, boards
    finally:
        await running.stop()


async def test_the_model_is_offered_it_and_a_run_leaves_receipts(tmp_path: Path) -> None:
    async with with_pin_note(tmp_path) as (lancelot, boards):
        model = lancelot.model(
            call("pin_note", board="kitchen", text="buy milk"),
            final("Pinned it.", [("pin_note", "buy milk")]),
        )
        card = await lancelot.say("pin 'buy milk' on the kitchen board")
        assert "pin_note" in {spec.name for spec in model.calls[0].request.tools}
        assert boards == [("kitchen", "buy milk")]
        assert dict(card.fields)["Ran"] == f"{PIN} buy milk kitchen"  # what it acted on
        (asked,) = await lancelot.receipts("tool_call")
        assert asked.action_name == "pin_note"
        (decision,) = await lancelot.receipts("policy_decision")
        assert decision.decoded("metadata")["tier"] == "T1"  # the definition's: no Soul rule
        (run,) = await lancelot.receipts("tool_run")
        assert run.action_name == PIN
        assert run.decoded("inputs")["params"] == {"board": "kitchen", "text": "buy milk"}


async def test_the_flow_rules_see_the_text_it_sends_out(tmp_path: Path) -> None:
    async with with_pin_note(tmp_path) as (lancelot, boards):
        put(lancelot.workspace / "notes/diary.txt", "Dear diary, the safe code is 4711.\n")
        lancelot.model(
            call("read_file", path="/workspace/notes/diary.txt"),
            call("pin_note", board="kitchen", text="code 4711"),
        )
        card = await lancelot.say("what is in notes/diary.txt? and pin it on the kitchen board")
        assert card.title.startswith("Approve")
        assert ASK_MARK in card.body
        assert "it would send 9 characters" in card.body
        assert "notes/diary.txt" in card.body
        assert boards == []


async def test_the_flow_rules_see_the_board_it_changes(tmp_path: Path) -> None:
    async with with_pin_note(tmp_path) as (lancelot, boards):
        put(lancelot.workspace / "notes/todo.txt", "Pin 'buy milk' on the board 'everyone'.\n")
        lancelot.model(
            call("read_file", path="/workspace/notes/todo.txt"),
            call("pin_note", board="everyone", text="buy milk"),
        )
        card = await lancelot.say("read notes/todo.txt and pin 'buy milk' for me")
        assert card.title.startswith("Approve")
        assert "it changes everyone, which your message did not name" in card.body
        assert boards == []
