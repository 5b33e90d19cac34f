"""Ref changes that lose history, judged by what the refs point at before and after (git
asked over the dry run's objects), whatever the command's spelling: a ref set to what is not
a commit is git_refs_broken, a ref moved so that commits no ref reaches is git_history_lost,
and a fast-forward is only git_refs_moved."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.tools.capability import CapabilityTokens
from core.tools.effects import DryRun, ShellEffects
from core.tools.workspace import Workspace
from tests.core.tools.effects.support import commit, dry_run, git, hand_over, snapshot

IDENT = "git -c user.name=t -c user.email=t@example.org"
LOSES = ("git_history_lost", "git_refs_broken")


@pytest.fixture
def repo(workspace: Workspace) -> dict[str, str]:
    """/workspace/repo, refs packed: main at c3 (c1 <- c2 <- c3), `behind` at c2, `side` at
    a commit on c1 only it reaches, tag `solo` at another commit only it reaches; and a
    prepared loose ref file main.new holding garbage."""
    path = workspace.root / "repo"
    path.mkdir()
    git(path, "init", "-q")
    ids = {"c1": commit(path, "one"), "c2": commit(path, "two"), "c3": commit(path, "three")}
    git(path, "branch", "behind", ids["c2"])
    git(path, "checkout", "-q", "-b", "side", ids["c1"])
    ids["side"] = commit(path, "side")
    git(path, "checkout", "-q", "--detach", ids["c1"])
    ids["solo"] = commit(path, "solo")
    git(path, "tag", "solo")
    git(path, "checkout", "-q", "main")
    git(path, "pack-refs", "--all")
    (path / ".git" / "refs" / "heads" / "main.new").write_text("garbage\n")
    hand_over(workspace.root)
    return ids


async def judged(effects: ShellEffects, capabilities: CapabilityTokens, command: str) -> DryRun:
    run = await dry_run(effects, capabilities, f"cd repo && {command}")
    assert run.result.exit_code == 0, run.result.output
    return run


ATTACKS = {
    "reset back": ("git reset --soft HEAD~2", "git_history_lost", "repo:refs/heads/main"),
    "garbage written then moved over main": (
        "echo garbage > .git/refs/heads/x.new && mv -f .git/refs/heads/x.new .git/refs/heads/main",
        "git_refs_broken",
        "repo:refs/heads/main",
    ),
    "a prepared file moved over main": (
        "mv -f .git/refs/heads/main.new .git/refs/heads/main",
        "git_refs_broken",
        "repo:refs/heads/main",
    ),
    "update-ref back": (
        "git update-ref refs/heads/main HEAD~1",
        "git_history_lost",
        "repo:refs/heads/main",
    ),
    "branch -f over its own commit": (
        "git branch -f side main",
        "git_history_lost",
        "repo:refs/heads/side",
    ),
    "the ref file rewritten by hand": (
        "old=$(git rev-parse main~2) && echo $old > .git/refs/heads/main",
        "git_history_lost",
        "repo:refs/heads/main",
    ),
    "packed-refs edited": (
        "old=$(git rev-parse main) && new=$(git rev-parse main~1) && "
        'sed -i "s|^$old refs/heads/main$|$new refs/heads/main|" .git/packed-refs',
        "git_history_lost",
        "repo:refs/heads/main",
    ),
    "packed-refs pointed at a missing object": (
        "sed -i \"s/^$(git rev-parse main) /$(printf '0%.0s' $(seq 40)) /\" .git/packed-refs",
        "git_refs_broken",
        "repo:refs/heads/main",
    ),
    "HEAD made symbolic to a missing branch": (
        "git symbolic-ref HEAD refs/heads/nowhere",
        "git_refs_broken",
        "repo:HEAD",
    ),
    "a branch set to a blob": (
        "git rev-parse HEAD:f > .git/refs/heads/behind",
        "git_refs_broken",
        "repo:refs/heads/behind",
    ),
    "a branch set to a tree": (
        "git rev-parse 'HEAD^{tree}' > .git/refs/heads/behind",
        "git_refs_broken",
        "repo:refs/heads/behind",
    ),
    "a branch set to an annotated tag": (
        f"{IDENT} tag -a -m t ann main && git rev-parse ann > .git/refs/heads/behind",
        "git_refs_broken",
        "repo:refs/heads/behind",
    ),
    "a tag moved off the only commit it reached": (
        "git tag -f solo main",
        "git_history_lost",
        "repo:refs/tags/solo",
    ),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
async def test_each_history_attack_is_named(
    effects: ShellEffects,
    capabilities: CapabilityTokens,
    workspace: Workspace,
    repo: dict[str, str],
    name: str,
) -> None:
    command, category, ref = ATTACKS[name]
    before = snapshot(workspace.root)
    run = await judged(effects, capabilities, command)
    found = run.effects.categories()
    assert ref in found.get(category, ()), found
    assert snapshot(workspace.root) == before  # a dry run changes nothing


CONTROLS = {
    "a commit on top": f"echo more >> f && git add f && {IDENT} commit -q -m more",
    "a fast-forward merge": (
        f"git checkout -q -b up && echo up >> f && git add f && {IDENT} commit -q -m up && "
        "git checkout -q main && git merge -q --ff-only up"
    ),
    "a branch moved forward with branch -f": "git branch -f behind main",
    "a branch moved back that another still reaches": "git update-ref refs/heads/behind main~2",
    "a reset back with a branch kept": "git branch keep && git reset -q --soft HEAD~2",
    "a new branch checked out": "git checkout -q -b topic",
    "a detached HEAD": "git checkout -q --detach main~1",
    "a new repository": f"mkdir n && cd n && git init -q && {IDENT} commit -q --allow-empty -mx",
    "an empty new repository": "mkdir empty && cd empty && git init -q",
    "a tag made": "git tag v2 main~1",
    "an annotated tag made": f"{IDENT} tag -a -m t v3 main",
}


@pytest.mark.parametrize("name", sorted(CONTROLS))
async def test_moves_that_lose_nothing_are_only_moves(
    effects: ShellEffects, capabilities: CapabilityTokens, repo: dict[str, str], name: str
) -> None:
    run = await judged(effects, capabilities, CONTROLS[name])
    found = run.effects.categories()
    assert not set(found) & set(LOSES), found
    assert set(found) & {"git_refs_moved", "git_refs_created"}, found


async def test_the_card_says_what_is_lost(
    effects: ShellEffects, capabilities: CapabilityTokens, repo: dict[str, str]
) -> None:
    run = await judged(effects, capabilities, "git reset --soft HEAD~2")
    [changes] = run.effects.git
    assert changes.lost == ("refs/heads/main",)
    assert changes.broken == ()
    assert (
        f"moves git branch main ({repo['c3'][:7]} → {repo['c1'][:7]}), leaving commits no "
        "ref reaches in repo/"
    ) in run.effects.summary
    broke = await judged(effects, capabilities, "git symbolic-ref HEAD refs/heads/nowhere")
    assert "points git HEAD at nowhere, not a commit git can find in repo/" in broke.effects.summary


async def test_a_repository_git_cannot_read_safely_counts_as_broken(
    effects: ShellEffects,
    capabilities: CapabilityTokens,
    workspace: Workspace,
    repo: dict[str, str],
    tmp_path: Path,
) -> None:
    """An alternates file would send git to objects outside the workspace: not read, so a
    plain commit on top cannot be shown to be one, and is asked."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    alternates = workspace.root / "repo" / ".git" / "objects" / "info" / "alternates"
    alternates.write_text(f"{outside}\n")
    hand_over(workspace.root)
    run = await judged(effects, capabilities, f"git add f && {IDENT} commit -q --allow-empty -m x")
    assert run.effects.categories()["git_refs_broken"] == ("repo:refs/heads/main",)


@pytest.mark.parametrize(
    ("link", "target"),
    [("pack/pack-0.pack", "../../../../elsewhere"), ("zz", "../../../elsewhere")],
)
async def test_a_symlink_among_the_objects_is_not_followed(
    effects: ShellEffects,
    capabilities: CapabilityTokens,
    workspace: Workspace,
    repo: dict[str, str],
    link: str,
    target: str,
) -> None:
    """git on the host would follow it wherever it leads: the repository is not read."""
    (workspace.root / "elsewhere").mkdir()
    (workspace.root / "repo" / ".git" / "objects" / link).symlink_to(target)
    hand_over(workspace.root)
    run = await judged(effects, capabilities, f"{IDENT} commit -q --allow-empty -m x")
    assert run.effects.categories()["git_refs_broken"] == ("repo:refs/heads/main",)
