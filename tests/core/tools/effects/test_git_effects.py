"""Changes inside .git are told as git would: refs deleted, moved, created (loose or packed),
the index, objects, and what git obeys; not as raw object files."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.tools.capability import CapabilityTokens
from core.tools.effects import RefChange, ShellEffects
from core.tools.workspace import Workspace
from tests.core.tools.effects.support import dry_run, git, hand_over, snapshot

IDENT = "git -c user.name=t -c user.email=t@example.org"


@pytest.fixture
def repo(workspace: Workspace) -> dict[str, str]:
    """A repository at /workspace/repo: main and `packed` packed, `feature` loose."""
    path = workspace.root / "repo"
    path.mkdir()
    git(path, "init", "-q")
    (path / "f").write_text("one\n")
    git(path, "add", "f")
    git(path, "commit", "-q", "-m", "one")
    git(path, "branch", "packed")
    git(path, "pack-refs", "--all")
    git(path, "branch", "feature")
    main = git(path, "rev-parse", "main")
    hand_over(workspace.root)
    return {"main": main}


async def test_deleting_a_loose_branch(
    effects: ShellEffects,
    capabilities: CapabilityTokens,
    workspace: Workspace,
    repo: dict[str, str],
) -> None:
    before = snapshot(workspace.root)
    run = await dry_run(effects, capabilities, f"cd repo && {IDENT} branch -D feature")
    assert run.result.exit_code == 0, run.result.output
    [changes] = run.effects.git
    assert changes.repo == "repo"
    assert changes.refs == (RefChange("refs/heads/feature", repo["main"], None),)
    assert run.effects.categories() == {"git_refs_deleted": ("repo:refs/heads/feature",)}
    assert run.effects.summary == f"deletes git branch feature (was {repo['main'][:7]}) in repo/"
    assert snapshot(workspace.root) == before


async def test_deleting_a_packed_ref_with_update_ref(
    effects: ShellEffects, capabilities: CapabilityTokens, repo: dict[str, str]
) -> None:
    run = await dry_run(effects, capabilities, "cd repo && git update-ref -d refs/heads/packed")
    assert run.result.exit_code == 0, run.result.output
    [changes] = run.effects.git
    assert changes.refs == (RefChange("refs/heads/packed", repo["main"], None),)
    assert "repo/.git/packed-refs" in run.effects.paths()


async def test_deleting_the_checked_out_branch_by_update_ref(
    effects: ShellEffects, capabilities: CapabilityTokens, repo: dict[str, str]
) -> None:
    run = await dry_run(effects, capabilities, "cd repo && git update-ref -d refs/heads/main")
    [changes] = run.effects.git
    assert [ref.kind for ref in changes.refs] == ["deleted"]
    assert run.effects.categories()["git_refs_deleted"] == ("repo:refs/heads/main",)


async def test_a_commit_moves_the_branch_changes_the_index_and_adds_objects(
    effects: ShellEffects, capabilities: CapabilityTokens, repo: dict[str, str]
) -> None:
    command = f"cd repo && echo two >> f && git add f && {IDENT} commit -q -m two"
    run = await dry_run(effects, capabilities, command)
    assert run.result.exit_code == 0, run.result.output
    [changes] = run.effects.git
    [moved] = changes.refs
    assert (moved.name, moved.kind, moved.before) == ("refs/heads/main", "moved", repo["main"])
    assert changes.index_changed
    assert changes.objects_added == 3  # blob, tree, commit
    assert f"moves git branch main ({repo['main'][:7]} → " in run.effects.summary
    assert "changes the git staging area in repo/" in run.effects.summary
    assert run.effects.categories()["overwrites"] == ("repo/f",)


async def test_a_new_branch_and_checkout_move_head(
    effects: ShellEffects, capabilities: CapabilityTokens, repo: dict[str, str]
) -> None:
    run = await dry_run(effects, capabilities, "cd repo && git checkout -q -b topic")
    [changes] = run.effects.git
    assert {(ref.name, ref.kind) for ref in changes.refs} == {
        ("HEAD", "moved"),
        ("refs/heads/topic", "created"),
    }
    assert "moves git HEAD (main → topic)" in run.effects.summary


async def test_a_hook_or_config_change_is_named(
    effects: ShellEffects, capabilities: CapabilityTokens, repo: dict[str, str]
) -> None:
    """A config that holds no credential is not masked: its change is named, as a new
    repository's is. Hooks are masked (they run programs): a dry run cannot write one."""
    command = "cd repo && git config core.pager cat && cd .. && git init -q fresh"
    run = await dry_run(effects, capabilities, command + " && cd fresh && git config a.b c")
    assert run.result.exit_code == 0, run.result.output
    named = run.effects.categories()["git_config"]
    assert {"repo/.git/config", "fresh/.git/config"} <= set(named)
    masked = await dry_run(effects, capabilities, "echo hi > repo/.git/hooks/x")
    assert masked.result.exit_code != 0
    assert "git_config" not in masked.effects.categories()


async def test_removing_the_repository_deletes_every_branch(
    effects: ShellEffects,
    capabilities: CapabilityTokens,
    repo: dict[str, str],
    workspace: Workspace,
) -> None:
    run = await dry_run(effects, capabilities, "rm -rf repo/.git")
    [changes] = run.effects.git
    assert {ref.name for ref in changes.refs if ref.kind == "deleted"} == {
        "HEAD",
        "refs/heads/feature",
        "refs/heads/main",
        "refs/heads/packed",
    }
    assert Path(workspace.root / "repo/.git").is_dir()
