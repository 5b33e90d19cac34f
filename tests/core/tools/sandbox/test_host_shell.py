"""HostShell: the host, only when FEATURE_TOOLS_HOST_EXECUTION is on; a timeout kills it all."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from core.errors import PolicyDenied, ToolUnavailable
from core.features import FeatureFlags
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from core.tools.sandbox import HostShell
from core.tools.workspace import Workspace
from tests.core.tools.sandbox.support import run


def host(workspace: Workspace, capabilities: CapabilityTokens, flag: str) -> HostShell:
    features = FeatureFlags({"FEATURE_TOOLS_HOST_EXECUTION": flag})
    return HostShell(workspace, capabilities, features, timeout=2.0)


async def test_refused_while_the_flag_is_off(
    workspace: Workspace, capabilities: CapabilityTokens
) -> None:
    shell = host(workspace, capabilities, "false")
    assert await shell.health() == "host execution is off (FEATURE_TOOLS_HOST_EXECUTION)"
    with pytest.raises(ToolUnavailable) as refused:
        await run(shell, capabilities, "touch ran")
    assert "FEATURE_TOOLS_HOST_EXECUTION" in str(refused.value)
    assert not (workspace.root / "ran").exists()


async def test_runs_in_the_workspace_with_exit_code_and_no_secrets(
    workspace: Workspace, capabilities: CapabilityTokens, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "placeholder-not-a-real-token")
    shell = host(workspace, capabilities, "true")
    result = await run(shell, capabilities, 'pwd; echo "[$TELEGRAM_BOT_TOKEN]" > seen; exit 3')
    assert result.exit_code == 3
    assert result.output.strip() == str(workspace.root)
    assert (workspace.root / "seen").read_text() == "[]\n"


async def test_a_timeout_kills_the_whole_process_group(
    workspace: Workspace, capabilities: CapabilityTokens
) -> None:
    shell = host(workspace, capabilities, "true")
    started = time.monotonic()
    result = await run(shell, capabilities, "sleep 60 & echo $! > child; sleep 60")
    assert time.monotonic() - started < 10
    assert result.exit_code == 124
    assert "killed: still running after 2 s" in result.output
    child = int((workspace.root / "child").read_text())
    for _ in range(50):  # the background child was in the group: it is gone (or a zombie)
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        if Path(f"/proc/{child}/stat").read_text().split()[2] == "Z":
            break
        time.sleep(0.05)
    else:
        pytest.fail("the background child outlived the timeout")


async def test_a_forged_token_runs_nothing(
    workspace: Workspace, capabilities: CapabilityTokens
) -> None:
    shell = host(workspace, capabilities, "true")
    action = ToolAction("shell.exec", "touch ran")
    with pytest.raises(PolicyDenied):
        await shell.run(action, CapabilityTokens(b"other").issue(action.digest))
    assert not (workspace.root / "ran").exists()
