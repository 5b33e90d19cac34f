"""/mcp from the phone: the servers, their state and their tools, each with a signed
Enable/Disable button; a switch is a receipt, is kept in the home across restarts, and a
tool switched off is not offered to the model (nor run, if a call for it comes anyway)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import PolicyDenied
from core.tools.action import ToolAction
from tests.core.mcp.conftest import program
from tests.core.mcp.stage import mcp_stage, settled
from tests.fakes.owner import tap
from tests.fakes.scripted_model import final, text

pytestmark = pytest.mark.timeout(180)

SLOW = 30.0  # a server runs in the request: room for a loaded machine

TIME = {"time": {"command": program("mcp-server-time")}}


async def test_mcp_lists_the_servers_with_their_state_and_tools(tmp_path: Path) -> None:
    async with mcp_stage(tmp_path, TIME) as lancelot:
        card = await lancelot.say("/mcp", SLOW)
        assert "time (stdio): ready, 2 of 2 tools on" in card.body
        assert [b.label for b in card.buttons] == ["Disable time"]
        tools = await lancelot.say("/mcp time", SLOW)
        assert "  get_current_time: on, T0, runs without asking" in tools.body
        assert [b.label for b in tools.buttons] == [
            "Disable time",
            "Disable get_current_time", "Ask before get_current_time",
            "Disable convert_time", "Ask before convert_time",
        ]  # fmt: skip
        unknown = await lancelot.say("/mcp nothing", SLOW)
        assert unknown.body == "No MCP server is called 'nothing' (time)."


async def test_a_tool_switched_off_is_not_offered_and_the_choice_is_a_receipt(
    tmp_path: Path,
) -> None:
    async with mcp_stage(tmp_path, TIME) as lancelot:
        card = await lancelot.say("/mcp time", SLOW)
        edited = await tap(lancelot.app, lancelot.phone, card, "Disable get_current_time")
        assert edited is not None
        assert "  get_current_time: off" in edited.body
        assert "Enable get_current_time" in [b.label for b in edited.buttons]
        model = lancelot.model(text("no clock"))
        await lancelot.say("what time is it?", SLOW)
        names = {spec.name for spec in model.calls[0].request.tools}
        assert "mcp__time__get_current_time" not in names
        assert "mcp__time__convert_time" in names
        (switched,) = await lancelot.receipts("mcp_switched")
        assert switched.action_name == "time.get_current_time"
        assert switched.decoded("inputs")["on"] is False


async def test_switching_a_server_off_survives_a_restart(tmp_path: Path) -> None:
    async with mcp_stage(tmp_path, TIME) as lancelot:
        card = await lancelot.say("/mcp", SLOW)
        edited = await tap(lancelot.app, lancelot.phone, card, "Disable time")
        assert edited is not None
        assert "time (stdio): disabled, turned off by you" in edited.body
        model = lancelot.model(text("no clock"))
        await lancelot.say("what time is it?", SLOW)
        assert not any(s.name.startswith("mcp__") for s in model.calls[0].request.tools)
        chosen = json.loads((tmp_path / "home" / "mcp_choices.json").read_text())
        assert chosen["servers"] == {"time": False}
        await lancelot.restart()  # the same home
        assert (await settled(lancelot, "time")).status == "disabled"
        card = await lancelot.say("/mcp", SLOW)
        assert "time (stdio): disabled, turned off by you" in card.body
        edited = await tap(lancelot.app, lancelot.phone, card, "Enable time")
        assert edited is not None
        assert (await settled(lancelot, "time")).status == "ready"
        lancelot.model(final("ok"))
        assert lancelot.app.tools.get("mcp__time__get_current_time") is not None


async def test_a_call_for_a_tool_switched_off_is_refused_even_with_a_capability(
    tmp_path: Path,
) -> None:
    async with mcp_stage(tmp_path, TIME) as lancelot:
        card = await lancelot.say("/mcp time", SLOW)
        await tap(lancelot.app, lancelot.phone, card, "Disable get_current_time")
        kit = lancelot.app.governance
        assert kit is not None
        action = ToolAction("mcp.time.get_current_time", None, {"timezone": "UTC"})
        token = kit.capabilities.issue(action.digest)  # as an approval granted before
        with pytest.raises(PolicyDenied, match="you turned MCP server time's tool"):
            await kit.tools.run(action, token)
        assert await lancelot.receipts("mcp_call") == []


async def test_health_says_which_server_is_down_and_status_shows_each_state(
    tmp_path: Path,
) -> None:
    servers = {**TIME, "gone": {"command": str(tmp_path / "no-such-server")}}
    async with mcp_stage(tmp_path, servers, expect_failed=("gone",)) as lancelot:
        lancelot.app.health.mark_ready()  # as `lancelot run` does once started
        health = await lancelot.say("/health")
        assert health.title == "Health: ready, degraded", health
        assert "MCP server gone is down (cannot start the server: no such program" in health.body
        assert "time" not in health.body.partition("Passing:")[0]  # only gone is down
        status = await lancelot.say("/status")
        assert dict(status.fields)["MCP servers"] == "time ready (2 tools), gone failed"
