"""SafeREPL's commands do what the owner expects inside the workspace and nothing outside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import PolicyDenied
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.safe_repl import SafeRepl
from core.tools.workspace import Workspace


@pytest.fixture
def repl(ws: Workspace, tokens: CapabilityTokens) -> SafeRepl:
    return SafeRepl(ws, tokens)


async def run(repl: SafeRepl, tokens: CapabilityTokens, command: str) -> ToolResult:
    action = ToolAction("shell.exec", command, {})
    return await repl.run(action, tokens.issue(action.digest))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("secret")
    return folder


async def test_the_everyday_commands(
    repl: SafeRepl, tokens: CapabilityTokens, ws: Workspace
) -> None:
    async def ok(command: str) -> str:
        result = await run(repl, tokens, command)
        assert result.exit_code == 0, (command, result.output)
        return result.output

    await ok("mkdir -p notes/old")
    await ok("touch notes/a.txt")
    (ws.root / "notes" / "a.txt").write_text("milk\neggs\n")
    assert await ok("cat /workspace/notes/a.txt") == "milk\neggs\n"
    assert await ok("ls notes") == "a.txt\nold/"
    assert await ok("grep -rn eggs notes") == "/workspace/notes/a.txt:2:eggs"
    assert await ok("grep -l milk notes/a.txt") == "/workspace/notes/a.txt"
    assert await ok("find . -name '*.txt'") == "/workspace/notes/a.txt"
    await ok("cp notes/a.txt notes/old")
    await ok("cp -r notes backup")
    assert (ws.root / "backup" / "old" / "a.txt").read_text() == "milk\neggs\n"
    await ok("mv backup/old/a.txt backup/b.txt")
    lines = (await ok("ls -l backup")).splitlines()
    assert [line.split()[0] + line.split()[-1] for line in lines] == ["-a.txt", "-b.txt", "dold/"]
    assert lines[1].split()[1] == "10"
    await ok("rm -r backup")
    assert not (ws.root / "backup").exists()
    assert await ok("pwd") == "/workspace"


async def test_errors_name_the_path_and_exit_non_zero(
    repl: SafeRepl, tokens: CapabilityTokens, ws: Workspace
) -> None:
    (ws.root / "folder").mkdir()
    missing = await run(repl, tokens, "cat nope.txt")
    assert (missing.exit_code, missing.output) == (
        1,
        "cat: /workspace/nope.txt: no such file or directory",
    )
    folder = await run(repl, tokens, "cat folder")
    assert folder.exit_code == 1
    assert "/workspace/folder: it is a folder, not a file" in folder.output
    assert (await run(repl, tokens, "rm folder")).exit_code == 2
    assert (await run(repl, tokens, "rm -f nope.txt")).exit_code == 0
    assert (await run(repl, tokens, "rm /workspace")).exit_code == 2
    assert (await run(repl, tokens, "cp -r folder folder/inner")).exit_code == 2


async def test_links_out_of_the_workspace_lead_nowhere(
    repl: SafeRepl, tokens: CapabilityTokens, ws: Workspace, outside: Path
) -> None:
    os.symlink(outside / "secret.txt", ws.root / "file-link")
    os.symlink(outside, ws.root / "dir-link")
    for command in ("cat file-link", "cat dir-link/secret.txt", "ls dir-link", "touch file-link"):
        with pytest.raises(PolicyDenied):
            await run(repl, tokens, command)
    grep = await run(repl, tokens, "grep -r secret /workspace")
    assert "secret" not in grep.output
    assert (await run(repl, tokens, "rm file-link")).exit_code == 0  # the link, not the file
    assert (await run(repl, tokens, "rm -r dir-link")).exit_code == 0
    assert (outside / "secret.txt").read_text() == "secret"
    assert sorted(p.name for p in ws.root.iterdir()) == []


async def test_rm_and_mv_act_on_a_link_itself_and_cp_replaces_it(
    repl: SafeRepl, tokens: CapabilityTokens, ws: Workspace
) -> None:
    (ws.root / "target.txt").write_text("keep me")
    (ws.root / "other.txt").write_text("other")
    os.symlink("target.txt", ws.root / "link")
    assert (await run(repl, tokens, "cat link")).output == "keep me"
    assert (await run(repl, tokens, "mv link moved")).exit_code == 0
    assert (ws.root / "moved").is_symlink()
    assert (await run(repl, tokens, "cp other.txt moved")).exit_code == 0
    assert not (ws.root / "moved").is_symlink()
    assert (ws.root / "target.txt").read_text() == "keep me"
    os.symlink("target.txt", ws.root / "link")
    assert (await run(repl, tokens, "rm link")).exit_code == 0
    assert (ws.root / "target.txt").read_text() == "keep me"


async def test_a_fifo_does_not_hang_cat_or_grep(
    repl: SafeRepl, tokens: CapabilityTokens, ws: Workspace
) -> None:
    os.mkfifo(ws.root / "pipe")
    assert (await run(repl, tokens, "cat pipe")).exit_code == 1
    assert (await run(repl, tokens, "grep -r x /workspace")).exit_code == 0
