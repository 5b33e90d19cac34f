"""Nothing runs in the sandbox without the policy engine's token for exactly that action."""

from __future__ import annotations

import pytest

from core.errors import PolicyDenied
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from core.tools.sandbox import DockerSandbox
from core.tools.workspace import Workspace


@pytest.mark.parametrize("kind", ["missing", "forged", "other-action", "garbage"])
async def test_a_missing_or_forged_token_runs_nothing(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, workspace: Workspace, kind: str
) -> None:
    action = ToolAction("shell.exec", "touch /workspace/ran")
    token = {
        "missing": None,
        "forged": CapabilityTokens(b"someone else").issue(action.digest),
        "other-action": capabilities.issue(ToolAction("shell.exec", "true").digest),
        "garbage": "not-a-token",
    }[kind]
    with pytest.raises(PolicyDenied):
        await sandbox.run(action, token)
    assert not (workspace.root / "ran").exists()
    assert sandbox.pool.launched == []  # refused before any container was even asked for
