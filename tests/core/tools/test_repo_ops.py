"""RepoOps against real git: status -> apply_patch -> commit -> branch -> checkout, and the
ways a repository could make git run programs or leave the workspace."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.errors import PolicyDenied, ToolFailed
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.repo_ops import RepoOps
from core.tools.workspace import Workspace

PATCH = """\
diff --git a/hello.txt b/hello.txt
--- a/hello.txt
+++ b/hello.txt
@@ -1 +1,2 @@
 hello
+world
diff --git a/new.txt b/new.txt
new file mode 100644
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+fresh
"""


def git(repo: Path, *args: str) -> str:
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repo(ws: Workspace) -> Path:
    root = ws.root / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "hello.txt").write_text("hello\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


async def do(ops: RepoOps, tokens: CapabilityTokens, capability: str, **params: Any) -> ToolResult:
    action = ToolAction(capability, None, {"path": "/workspace/proj", **params})
    return await ops.run(action, tokens.issue(action.digest))


async def test_status_apply_commit_branch_checkout(
    ws: Workspace, tokens: CapabilityTokens, repo: Path
) -> None:
    ops = RepoOps(ws, tokens)
    status = await do(ops, tokens, "repo.status")
    assert (status.exit_code, status.output.strip()) == (0, "## main")
    applied = await do(ops, tokens, "repo.apply_patch", patch=PATCH)
    assert applied.exit_code == 0, applied.output
    assert (repo / "hello.txt").read_text() == "hello\nworld\n"
    assert applied.file_changes == {
        "/workspace/proj/hello.txt": hashlib.sha256(b"hello\nworld\n").hexdigest(),
        "/workspace/proj/new.txt": hashlib.sha256(b"fresh\n").hexdigest(),
    }
    status = await do(ops, tokens, "repo.status")
    assert " M hello.txt" in status.output
    assert "?? new.txt" in status.output
    diff = await do(ops, tokens, "repo.diff")
    assert "+world" in diff.output
    commit = await do(ops, tokens, "repo.commit", message="Say hello to the world")
    assert commit.exit_code == 0, commit.output
    assert git(repo, "log", "-1", "--format=%s|%an") == "Say hello to the world|Lancelot"
    assert git(repo, "status", "--porcelain") == ""
    branch = await do(ops, tokens, "repo.branch", name="feature/x")
    assert branch.exit_code == 0, branch.output
    checkout = await do(ops, tokens, "repo.checkout", ref="feature/x")
    assert checkout.exit_code == 0, checkout.output
    assert git(repo, "branch", "--show-current") == "feature/x"
    created = await do(ops, tokens, "repo.checkout", ref="spike", create=True)
    assert created.exit_code == 0, created.output
    assert git(repo, "branch", "--show-current") == "spike"


async def test_a_patch_that_does_not_apply_changes_nothing(
    ws: Workspace, tokens: CapabilityTokens, repo: Path
) -> None:
    ops = RepoOps(ws, tokens)
    stale = PATCH.replace(" hello\n+world", " goodbye\n+world")
    result = await do(ops, tokens, "repo.apply_patch", patch=stale)
    assert result.exit_code != 0
    assert "does not apply" in result.output
    assert result.file_changes == {}
    assert (repo / "hello.txt").read_text() == "hello\n"
    assert not (repo / "new.txt").exists()


async def test_a_patch_writing_a_secret_file_is_refused(
    ws: Workspace, tokens: CapabilityTokens, repo: Path
) -> None:
    ops = RepoOps(ws, tokens)
    patch = PATCH.replace("new.txt", ".env").replace("+fresh", "+TOKEN=x")
    with pytest.raises(PolicyDenied, match="sensitive"):
        await do(ops, tokens, "repo.apply_patch", patch=patch)
    assert not (repo / ".env").exists()
    assert (repo / "hello.txt").read_text() == "hello\n"


async def test_hooks_never_run(ws: Workspace, tokens: CapabilityTokens, repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {repo.parent / 'HOOK-RAN'}\n")
    hook.chmod(0o755)
    (repo / "hello.txt").write_text("changed\n")
    result = await do(RepoOps(ws, tokens), tokens, "repo.commit", message="no hooks")
    assert result.exit_code == 0, result.output
    assert not (repo.parent / "HOOK-RAN").exists()


@pytest.mark.parametrize(
    "setting",
    [
        ("filter.evil.clean", "touch /tmp/x"),
        ("core.fsmonitor", "touch /tmp/x"),
        ("diff.x.textconv", "cat"),
        ("include.path", "/etc/gitconfig"),
    ],
)
async def test_a_repository_whose_config_runs_programs_is_refused(
    ws: Workspace, tokens: CapabilityTokens, repo: Path, setting: tuple[str, str]
) -> None:
    git(repo, "config", *setting)
    with pytest.raises(PolicyDenied, match="run programs"):
        await do(RepoOps(ws, tokens), tokens, "repo.status")


async def test_no_repository_discovery_beyond_the_named_folder(
    tmp_path: Path, tokens: CapabilityTokens
) -> None:
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q")
    ws = Workspace(outer / "ws")
    ops = RepoOps(ws, tokens)
    action = ToolAction("repo.status", None, {})
    with pytest.raises(ToolFailed, match="not a git repository"):
        await ops.run(action, tokens.issue(action.digest))


@pytest.mark.parametrize("name", ["-D", "--force", "a..b", "x y"])
async def test_bad_branch_names_are_refused(
    ws: Workspace, tokens: CapabilityTokens, repo: Path, name: str
) -> None:
    with pytest.raises(ToolFailed, match="not a valid branch name"):
        await do(RepoOps(ws, tokens), tokens, "repo.checkout", ref=name)


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A repository outside the workspace, holding a secret the workspace must not see."""
    root = tmp_path / "other"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "secret.txt").write_text("OTHER-REPO-SECRET\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "the other repository's secret")
    return root


@pytest.mark.parametrize(
    "point",
    [
        lambda repo, other: (repo / ".git" / "commondir").write_text(f"{other}/.git\n"),
        lambda repo, other: (repo / ".git" / "objects" / "info" / "alternates").write_text(
            f"{other}/.git/objects\n"
        ),
        lambda repo, other: (repo / ".git" / "refs" / "heads" / "other").symlink_to(
            other / ".git" / "refs" / "heads" / "main"
        ),
    ],
    ids=["commondir", "alternates", "a symlinked ref"],
)
async def test_a_repository_that_points_outside_is_refused(
    ws: Workspace, tokens: CapabilityTokens, repo: Path, elsewhere: Path, point: Any
) -> None:
    point(repo, elsewhere)
    ops = RepoOps(ws, tokens)
    for capability in ("repo.status", "repo.diff"):
        with pytest.raises((PolicyDenied, ToolFailed)) as caught:
            await do(ops, tokens, capability)
        assert "OTHER-REPO-SECRET" not in str(caught.value)
