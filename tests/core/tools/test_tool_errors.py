"""OS errors at the tool edge become ToolFailed with a short message the owner can read."""

from __future__ import annotations

import errno
from typing import Any

import pytest

from core.errors import PolicyDenied, ToolFailed
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from core.tools.file_ops import FileOps, file_action
from core.tools.oserrors import explain, tool_failure
from core.tools.safe_repl import SafeRepl
from core.tools.workspace import Workspace

LONG = "/workspace/" + "b" * 256


async def run(ops: FileOps, tokens: CapabilityTokens, capability: str, **params: Any) -> None:
    """Run FileOps directly (the action built by hand: building it would already refuse)."""
    action = ToolAction(capability, None, {**params, "in_workspace": True})
    await ops.run(action, tokens.issue(action.digest))


@pytest.mark.parametrize(
    ("capability", "params"),
    [
        ("file.read", {"path": LONG}),
        ("file.write", {"path": LONG, "content": "x"}),
        ("file.write", {"path": f"{LONG}/inner.txt", "content": "x"}),
        ("file.list", {"path": LONG}),
        ("file.delete", {"path": LONG}),
        ("file.move", {"source": "/workspace/a.txt", "target": LONG}),
    ],
)
async def test_a_name_over_255_bytes_is_a_clear_tool_failure(
    ws: Workspace, tokens: CapabilityTokens, capability: str, params: dict[str, Any]
) -> None:
    (ws.root / "a.txt").write_text("a")
    ops = FileOps(ws, tokens)
    with pytest.raises(ToolFailed) as caught:
        await run(ops, tokens, capability, **params)
    assert "the name is too long" in caught.value.user_message
    assert caught.value.user_message.startswith(capability)
    assert len(caught.value.user_message) < 200
    assert (ws.root / "a.txt").read_text() == "a"


def test_building_the_action_for_a_long_name_fails_clearly(ws: Workspace) -> None:
    for capability in ("file.read", "file.write", "file.delete"):
        with pytest.raises(ToolFailed, match="the name is too long"):
            file_action(ws, capability, {"path": LONG})


def test_a_broken_character_in_a_path_is_refused_by_the_guard(ws: Workspace) -> None:
    with pytest.raises(PolicyDenied, match="lone surrogate"):
        ws.resolve("/workspace/\ud800.txt")


async def test_safe_repl_says_why_in_words(ws: Workspace, tokens: CapabilityTokens) -> None:
    repl = SafeRepl(ws, tokens)
    action = ToolAction("shell.exec", f"touch {LONG}", {})
    result = await repl.run(action, tokens.issue(action.digest))
    assert result.exit_code == 1
    assert "the name is too long" in result.output
    assert len(result.output) < 200


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.ENAMETOOLONG, "too long"),
        (errno.ENOSPC, "disk is full"),
        (errno.EACCES, "permission denied"),
        (errno.EISDIR, "a folder, not a file"),
        (errno.ENOTDIR, "a file, not a folder"),
        (errno.ELOOP, "symbolic link"),
        (errno.EROFS, "read-only"),
        (errno.ENOENT, "no such file"),
    ],
)
def test_each_common_os_error_has_plain_words(code: int, words: str) -> None:
    failure = tool_failure(OSError(code, "raw text"), "file.write /workspace/x")
    assert words in explain(OSError(code, "raw text"))
    assert failure.user_message == f"file.write /workspace/x: {explain(OSError(code, 'x'))}"
