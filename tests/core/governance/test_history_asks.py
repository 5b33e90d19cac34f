"""History asks, from the chat on the real Docker sandbox: a command that moves a branch so
that commits no ref reaches, or sets a ref to what is not a commit, waits for a card, however
it is spelled; a fast-forward applies at once with Undo; and the Soul's own rule for a command
(git-rewrite) is kept when it is stricter than what the dry run shows."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.app import Lancelot
from core.config import Settings, load_settings
from core.events import CardKind
from tests.core.tools.effects.support import GIT, hand_over
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap

IDENT = "git -c user.name=t -c user.email=t@example.org"


@pytest.fixture
def settings(tmp_path: Path, docker_image: str) -> Settings:
    return load_settings(
        environ={"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_SANDBOX_IMAGE": docker_image}
    )


def git(repo: Path, *args: str) -> str:
    """git on the host (the workspace belongs to the sandbox's user once handed over)."""
    command = [*GIT, "-c", "safe.directory=*", *args]
    done = subprocess.run(command, cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def repo(app: Lancelot) -> Path:
    """A repository at the workspace's root: main with three commits, a staged change, and
    a prepared ref file holding garbage."""
    root = app.home / "workspace"
    git(root, "init", "-q")
    for line in ("one", "two", "three"):
        with (root / "f").open("a") as handle:
            handle.write(line + "\n")
        git(root, "add", "f")
        git(root, "commit", "-q", "-m", line)
    (root / "g").write_text("staged\n")
    git(root, "add", "g")
    (root / ".git" / "refs" / "heads" / "main.new").write_text("garbage\n")
    hand_over(root)
    return root


ASKS = [
    "git reset --soft HEAD~2",
    "echo garbage > .git/refs/heads/x.new && mv -f .git/refs/heads/x.new .git/refs/heads/main",
    "mv -f .git/refs/heads/main.new .git/refs/heads/main",
    "git update-ref refs/heads/main HEAD~1",
    "git symbolic-ref HEAD refs/heads/nowhere",
    "git restore --staged g",  # index only (T1 by effect); the Soul's git-rewrite rule asks
]


@pytest.mark.parametrize("command", ASKS)
async def test_history_changes_wait_for_the_owner(
    app: Lancelot, phone: MemoryChannel, repo: Path, command: str
) -> None:
    main, head = git(repo, "rev-parse", "main"), (repo / ".git" / "HEAD").read_text()
    card = await say(app, phone, f"/run {command}")
    assert card.kind is CardKind.APPROVAL, card.body
    assert git(repo, "rev-parse", "main") == main  # nothing moved before the owner said so
    assert (repo / ".git" / "HEAD").read_text() == head
    denied = await tap(app, phone, card, "Deny")
    assert denied.title == "Denied"
    assert git(repo, "rev-parse", "main") == main


async def test_the_card_names_the_branch_and_approve_moves_it(
    app: Lancelot, phone: MemoryChannel, repo: Path
) -> None:
    first = git(repo, "rev-parse", "main~2")
    card = await say(app, phone, "/run git reset --soft HEAD~2")
    assert "moves git branch main" in card.body
    assert "leaving commits no ref reaches" in card.body
    done = await tap(app, phone, card, "Approve")
    assert done.title == "Executed"
    assert git(repo, "rev-parse", "main") == first


async def test_a_fast_forward_applies_at_once_with_undo(
    app: Lancelot, phone: MemoryChannel, repo: Path
) -> None:
    old = git(repo, "rev-parse", "main")
    made = await say(app, phone, f"/run {IDENT} commit -q -m four")
    assert made.kind is CardKind.REPLY, made.body
    assert git(repo, "rev-parse", "main~1") == old
    assert [b.label for b in made.buttons] == ["Undo"]
    undone = await tap(app, phone, made, "Undo")
    assert undone.title == "Undone"
    assert git(repo, "rev-parse", "main") == old
