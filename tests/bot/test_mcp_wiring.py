"""The assembled Lancelot with MCP servers declared: ready before they are, the servers
connecting behind it; a broken mcp.json is one warning and Lancelot runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bot.app import Lancelot

BIN = Path(sys.executable).parent
pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def declared(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """LANCELOT_HOME/mcp.json with the test's text (its `mcp_json` parameter), written
    before the app starts."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    path = home / "mcp.json"
    path.write_text(request.param)
    return path


TIME_SERVER = json.dumps({"mcpServers": {"time": {"command": str(BIN / "mcp-server-time")}}})


@pytest.mark.parametrize("declared", [TIME_SERVER], indirect=True)
async def test_the_app_is_ready_before_its_servers_and_they_connect_behind_it(
    declared: Path, app: Lancelot
) -> None:
    (state,) = app.mcp.states()
    assert state.status == "connecting"  # the app was handed over without waiting
    ready = await app.mcp.wait_for("time", lambda s: s.status == "ready", 60)
    assert ready.tool("get_current_time") is not None
    result = await app.mcp.call("time", "get_current_time", {"timezone": "UTC"})
    assert result.ok, result.error


@pytest.mark.parametrize("declared", ['{"mcpServers": {'], indirect=True)
async def test_a_broken_file_is_one_warning_and_lancelot_runs(
    declared: Path, app: Lancelot, caplog: pytest.LogCaptureFixture
) -> None:
    assert app.mcp.states() == ()
    started = caplog.get_records("setup")  # the app was assembled in the fixture
    warnings = [r.getMessage() for r in started if r.name == "bot.mcp"]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"MCP servers: {declared}: line 1:")
