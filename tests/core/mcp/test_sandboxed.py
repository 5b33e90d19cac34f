"""A `"sandbox": true` server runs inside the hardened sandbox container, not on the host:
a stdlib-only MCP server (the image has python3 and no network to install anything) placed
in the workspace and started for real, through the assembled app, on the real Docker
engine. It sees the workspace as the shell does (sensitive files empty), runs as no root on
a read-only root, reaches no network, and gets its entry's env and nothing of Lancelot's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from core.mcp import McpServers
from tests.core.mcp.stage import mcp_stage
from tests.fakes import mcp_stdio_server

pytestmark = pytest.mark.timeout(180)

SECRET = "sk-" + "SANDBOXED" * 4


def probe_in_workspace(home: Path) -> dict[str, Any]:
    """The probe server's script copied into the workspace, with a note and a `.env`; its
    mcp.json entry."""
    workspace = home / "workspace"
    (workspace / "probe").mkdir(parents=True)
    shutil.copy(mcp_stdio_server.__file__, workspace / "probe" / "server.py")
    # The image's python3-minimal has no `json`: the standard library's, pure Python, beside it.
    shutil.copytree(
        Path(json.__file__).parent, workspace / "probe" / "json",
        ignore=shutil.ignore_patterns("__pycache__"),
    )  # fmt: skip
    (workspace / "notes.txt").write_text("hello from the workspace\n")
    (workspace / ".env").write_text(f"API_KEY={SECRET}\n")
    entry = {
        "command": "python3",
        "args": ["/workspace/probe/server.py"],
        "env": {"PROBE_TOKEN": "tok-123"},
        "sandbox": True,
    }
    return {"probe": entry}


async def said(servers: McpServers, tool: str, **arguments: object) -> Any:
    """What the probe's tool answered (parsed)."""
    result = await servers.call("probe", tool, arguments)
    assert result.ok, result.error or result.text
    return json.loads(result.text)


async def test_a_sandboxed_server_runs_in_the_container_with_the_workspace(
    tmp_path: Path,
) -> None:
    servers = probe_in_workspace(tmp_path / "home")
    servers["open"] = {**servers["probe"], "network": True}  # its entry allows a network
    async with mcp_stage(tmp_path, servers) as lancelot:
        mcp = lancelot.app.mcp
        state = mcp.state("probe")
        assert state is not None
        assert {tool.name for tool in state.tools} == {"identity", "read", "variable"}
        me = await said(mcp, "identity")
        assert me["in_container"] is True
        assert me["uid"] != 0
        assert me["root_read_only"] is True
        assert me["capabilities"] == "0000000000000000"
        assert me["capability_bound"] == "0000000000000000"  # every capability dropped
        assert me["no_new_privileges"] is True
        assert me["interfaces"] == ["lo"]  # no network
        notes = await said(mcp, "read", path="/workspace/notes.txt")
        assert notes == {"text": "hello from the workspace\n"}
        assert await said(mcp, "read", path="/workspace/.env") == {"text": ""}  # masked
        assert await said(mcp, "variable", name="PROBE_TOKEN") == {"value": "tok-123"}
        assert await said(mcp, "variable", name="LANCELOT_HOME") == {"value": None}
        assert lancelot.app.tools.get("mcp__probe__read") is not None  # offered, governed
        opened = await mcp.call("open", "identity", {})
        assert json.loads(opened.text)["interfaces"] != ["lo"]  # a network, and no traffic


async def test_without_the_sandbox_image_it_fails_and_never_runs_on_the_host(
    tmp_path: Path,
) -> None:
    servers = probe_in_workspace(tmp_path / "home")
    environ = {"LANCELOT_SANDBOX_IMAGE": "lancelot-sandbox:no-such-tag"}
    async with mcp_stage(tmp_path, servers, ("probe",), environ) as lancelot:
        state = lancelot.app.mcp.state("probe")
        assert state is not None
        assert state.status == "failed"
        assert "lancelot-sandbox:no-such-tag is missing" in (state.reason or "")
