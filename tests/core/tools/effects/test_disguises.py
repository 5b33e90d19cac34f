"""However a destructive command is spelled, its effect on the workspace is seen: the issue's
list of disguises that ran unapproved, each dry-run against canary files."""

from __future__ import annotations

import pytest

from core.tools.capability import CapabilityTokens
from core.tools.effects import ShellEffects
from core.tools.workspace import Workspace
from tests.core.tools.effects.support import dry_run, git, hand_over, snapshot

X = {"x": "deleted", "x/a": "deleted"}
F_GONE = {"f": "deleted"}
F_EMPTIED = {"f": "modified"}

DISGUISES = [
    ("$(echo rm) -rf x", X),
    ("`echo rm` -rf x", X),
    ("c=rm; $c -rf x", X),
    ("rm${IFS}-rf${IFS}x", X),
    ("/bin/r[m] -rf x", X),
    ("timeout -s KILL 5 rm -rf x", X),
    ("xargs -a list.txt rm -f", F_GONE),
    ("flock /tmp/lk rm -rf x", X),
    ("sh -c -- 'rm -rf x'", X),
    ("echo cm0gLXJmIHg= | base64 -d | sh", X),
    ("python3 -c \"import os;os.remove('f')\"", F_GONE),
    ("perl -e 'unlink \"f\"'", F_GONE),
    ("awk 'BEGIN{system(\"rm -rf x\")}'", X),
    ("git -c alias.x='!rm -rf x' x", X),
    (": > f", F_EMPTIED),
    ("cp /dev/null f", F_EMPTIED),
    ("sed -i d f", F_EMPTIED),
    ("sort -o f /dev/null", F_EMPTIED),
    ("chmod -R 000 x", {"x": "mode_changed"}),
    ("git checkout .", {"f": "modified"}),
    ("git rm -rqf .", {"f": "deleted", "x/a": "deleted", "list.txt": "deleted"}),
]


@pytest.fixture
def canaries(workspace: Workspace) -> str:
    """A repository with canary files; f has an uncommitted edit (for `git checkout .`)."""
    root = workspace.root
    (root / "x").mkdir()
    (root / "x/a").write_text("canary a\n")
    (root / "f").write_text("canary f\n")
    (root / "list.txt").write_text("f\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "canaries")
    main = git(root, "rev-parse", "HEAD")
    (root / "f").write_text("canary f, edited\n")
    hand_over(root)
    return main


@pytest.mark.parametrize(("command", "expected"), DISGUISES, ids=[c for c, _ in DISGUISES])
async def test_a_disguised_destructive_command_shows_what_it_destroys(
    effects: ShellEffects,
    capabilities: CapabilityTokens,
    workspace: Workspace,
    canaries: str,
    command: str,
    expected: dict[str, str],
) -> None:
    before = snapshot(workspace.root)
    run = await dry_run(effects, capabilities, command)
    found = {e.path: e.kind for e in run.effects.effects if not e.in_git}
    assert {path: found.get(path) for path in expected} == expected, run.result.output
    assert snapshot(workspace.root) == before


async def test_deleting_the_branch_checked_out_is_seen(
    effects: ShellEffects, capabilities: CapabilityTokens, canaries: str
) -> None:
    run = await dry_run(effects, capabilities, "git update-ref -d refs/heads/main")
    assert run.effects.categories()["git_refs_deleted"] == ("refs/heads/main",)
    assert f"deletes git branch main (was {canaries[:7]})" in run.effects.summary
