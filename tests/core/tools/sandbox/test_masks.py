"""Sensitive files are invisible to the sandbox by construction: whatever a command does
(a name built at run time, a tar of the workspace, a copy, a symlink, a hard link), it reads
empty stand-ins; only the run the owner approved on a card naming the file sees it."""

from __future__ import annotations

import pytest

from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.sandbox import DockerSandbox
from core.tools.sandbox.masks import REVEAL, find_sensitive
from core.tools.workspace import Workspace
from tests.core.tools.sandbox.secrets_ws import (
    ENV,
    READS,
    SECRET,
    intact,
    leaks,
    make_repo,
    plant,
)
from tests.core.tools.sandbox.support import run
from tests.fakes.workspace import put


async def run_as(
    box: DockerSandbox, caps: CapabilityTokens, action: ToolAction, *, approved: bool
) -> ToolResult:
    """Run `action` with a token issued as the policy would (`approved`: on a tap)."""
    return await box.run(action, caps.issue(action.digest, approved=approved))


@pytest.mark.parametrize("command", READS)
async def test_a_name_built_at_run_time_reads_no_secret(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, workspace: Workspace, command: str
) -> None:
    planted = plant(workspace.root)
    result = await run(sandbox, capabilities, command)
    assert not leaks(result.output), result.output
    assert intact(workspace.root, planted)


async def test_the_commands_still_work_around_the_masks(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    plant(workspace.root)
    result = await run(sandbox, capabilities, "grep -r ordinary . && wc -c .env")
    assert result.exit_code == 0
    assert "an ordinary note" in result.output
    assert "0 .env" in result.output


async def test_a_masked_file_cannot_be_written_moved_or_deleted(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    planted = plant(workspace.root)
    for command in ("rm -f .env", "echo x > .env", "mv .env gone", "ln .env notes/h",
                    "rm -rf .ssh", "truncate -s0 notes/sub/.env"):  # fmt: skip
        result = await run(sandbox, capabilities, command)
        assert result.exit_code != 0, command
    assert intact(workspace.root, planted)
    assert not (workspace.root / "gone").exists()


async def test_the_run_approved_on_a_card_naming_the_file_sees_it(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    plant(workspace.root)
    named = ToolAction("shell.exec", "cat .env notes/sub/.env", {REVEAL: [".env"]})
    result = await run_as(sandbox, capabilities, named, approved=True)
    assert ENV in result.output
    assert f"{SECRET}-sub" not in result.output  # not named on the card: still masked
    again = await run(sandbox, capabilities, "cat .env")  # the next run: masked again
    assert SECRET not in again.output


async def test_no_approval_or_another_reason_reveals_nothing(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    plant(workspace.root)
    unapproved = ToolAction("shell.exec", "cat .env", {REVEAL: [".env"]})
    result = await run_as(sandbox, capabilities, unapproved, approved=False)
    assert SECRET not in result.output
    other_reason = ToolAction("shell.exec", "rm notes/a.txt; f=.e; cat ${f}nv")
    result = await run_as(sandbox, capabilities, other_reason, approved=True)
    assert SECRET not in result.output


async def test_a_sensitive_file_added_later_is_masked_from_the_next_run(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    put(workspace.root / "notes" / "a.txt", "x\n")
    await run(sandbox, capabilities, "true")  # the pool is warm, made with nothing masked
    put(workspace.root / "keys" / "server.key", f"{SECRET}\n")
    result = await run(sandbox, capabilities, "cat keys/server.k''ey")
    assert SECRET not in result.output


def test_the_scan_finds_every_place_and_no_more(workspace: Workspace) -> None:
    plant(workspace.root)
    found = find_sensitive(workspace.root)
    assert found.files == {".env", "notes/sub/.env", ".git/config", "notes/innocent.txt"}
    assert found.dirs == {".ssh"}
    assert found.without(["/workspace/./notes/../.env", ".s?h"]).files == {
        "notes/sub/.env",
        ".git/config",
        "notes/innocent.txt",
    }


async def test_git_works_beside_a_config_holding_a_token(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    make_repo(workspace.root)
    command = "git status --short && git log --oneline && git remote -v && cat .git/con''fig"
    result = await run(sandbox, capabilities, command)
    assert result.exit_code == 0, result.output
    assert "one" in result.output
    assert "origin\thttps://example.org/r.git (fetch)" in result.output
    assert not leaks(result.output), result.output
    assert SECRET in (workspace.root / ".git" / "config").read_text()


async def test_a_masked_file_replaced_on_the_host_stays_masked(
    sandbox: DockerSandbox, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    """Saving a file by rename (editors, `git config`) drops a mount made on the old file:
    a container made before must not serve the next run."""
    put(workspace.root / ".env", ENV)
    await run(sandbox, capabilities, "true")  # the pool is warm, .env masked
    saved = put(workspace.root / ".env.new", f"API_KEY={SECRET}-new\n")
    saved.replace(workspace.root / ".env")
    result = await run(sandbox, capabilities, "f=.e; cat ${f}nv")
    assert not leaks(result.output), result.output
