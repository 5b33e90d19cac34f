"""UIBuilder writes templates into a new folder and never over anything; DeployOps runs the
configured command (argument list, clean environment, killed on timeout)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from typing import Any

import pytest

from core.errors import ToolFailed
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.deploy_ops import DeployOps
from core.tools.ui_builder import UIBuilder
from core.tools.workspace import Workspace


async def scaffold(ws: Workspace, tokens: CapabilityTokens, **params: Any) -> ToolResult:
    action = ToolAction("ui.scaffold", None, params)
    return await UIBuilder(ws, tokens).run(action, tokens.issue(action.digest))


async def test_static_page_scaffold_is_written_and_hashed(
    ws: Workspace, tokens: CapabilityTokens
) -> None:
    result = await scaffold(ws, tokens, template="static_page", path="site", title="Trip planner")
    assert result.exit_code == 0
    assert sorted(p.name for p in (ws.root / "site").iterdir()) == [
        "app.js",
        "index.html",
        "style.css",
    ]
    html = (ws.root / "site" / "index.html").read_text()
    assert "<title>Trip planner</title>" in html
    assert result.file_changes["/workspace/site/index.html"] == (
        hashlib.sha256(html.encode()).hexdigest()
    )


async def test_python_package_scaffold_passes_its_own_test(
    ws: Workspace, tokens: CapabilityTokens
) -> None:
    result = await scaffold(ws, tokens, template="python_package", path="pkg", title="Tally up")
    assert result.exit_code == 0
    root = ws.root / "pkg"
    assert (root / "src" / "tally_up" / "__init__.py").is_file()
    done = subprocess.run(
        [sys.executable, "-c", "import tally_up; assert tally_up.__version__ == '0.1.0'"],
        cwd=root / "src",
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


async def test_scaffold_never_overwrites(ws: Workspace, tokens: CapabilityTokens) -> None:
    (ws.root / "site").mkdir()
    (ws.root / "site" / "index.html").write_text("mine")
    result = await scaffold(ws, tokens, template="static_page", path="site")
    assert result.exit_code == 1
    assert "already exists" in result.output
    assert (ws.root / "site" / "index.html").read_text() == "mine"
    for params in (
        {"template": "nope", "path": "x"},
        {"template": "static_page", "path": "y", "title": "<script>alert(1)</script>"},
        {"template": "python_package", "path": "z", "package": "os; rm"},
    ):
        with pytest.raises(ToolFailed):
            await scaffold(ws, tokens, **params)
    assert sorted(p.name for p in ws.root.iterdir()) == ["site"]


async def deploy(ops: DeployOps, tokens: CapabilityTokens) -> ToolResult:
    action = ToolAction("deploy", None, {})
    return await ops.run(action, tokens.issue(action.digest))


async def test_deploy_runs_the_configured_command_without_lancelots_secrets(
    ws: Workspace, tokens: CapabilityTokens, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "not-for-deploys")
    monkeypatch.setenv("DEPLOY_TARGET", "staging")
    script = "import os; print('deployed to', os.environ['DEPLOY_TARGET'], os.getcwd()); " + (
        "print('leak' if 'TELEGRAM_BOT_TOKEN' in os.environ else 'clean')"
    )
    ops = DeployOps(ws, tokens, [sys.executable, "-c", script])
    result = await deploy(ops, tokens)
    assert result.exit_code == 0
    assert result.output.splitlines() == [f"deployed to staging {ws.root}", "clean"]


async def test_deploy_fails_clearly_when_unconfigured_or_slow(
    ws: Workspace, tokens: CapabilityTokens
) -> None:
    with pytest.raises(ToolFailed, match="no deploy command is configured"):
        await deploy(DeployOps(ws, tokens, []), tokens)
    with pytest.raises(ToolFailed, match="cannot start"):
        await deploy(DeployOps(ws, tokens, ["/nonexistent/deployer"]), tokens)
    slow = DeployOps(ws, tokens, [sys.executable, "-c", "import time; time.sleep(30)"], 0.5)
    with pytest.raises(ToolFailed, match="killed"):
        await deploy(slow, tokens)
