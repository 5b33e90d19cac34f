"""Committing a staged apply on the host: the workspace becomes exactly what the dry run's
upper layer shows, and the effects come back as written (what an undo checks against)."""

from __future__ import annotations

import os
import socket
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from core.tools.effects.commit import commit
from core.tools.effects.files import listing_digest
from core.tools.effects.model import ABSENT, Effect, FileState
from core.tools.effects.sources import ObjectSource
from core.tools.effects.stage import Plan, prepare
from tests.core.tools.effects.layers import Layers, sha, state, write
from tests.core.tools.effects.support import NOBODY, as_nobody, shared_folder, snapshot
from tests.fakes.descriptors import leaves_no_file_open

# Files only root may give away: as root the upper layer's are another user's, as the
# command user's would be; otherwise they stay the test's own.
OWNER = 4321 if os.geteuid() == 0 else os.geteuid()
BEFORE = {
    "gone.txt": "old",
    "keep.txt": "untouched",
    "keep-dir/": "",
    "link": "",
    "notes.md": "draft",
    "old-dir/x": "x",
    "run.sh": "echo",
    "was-dir/y": "y",
    "was-file": "f",
}
AFTER = {
    "keep.txt": "untouched",
    "keep-dir/": "",
    "new-dir/new.txt": "new",
    "notes.md": "final",
    "run.sh": "echo",
    "was-dir": "now a file",
    "was-file/inner": "i",
}
CHANGED = (
    *(
        "gone.txt",
        "keep-dir",
        "link",
        "new-dir",
        "new-dir/new.txt",
        "new-link",
        "notes.md",
        "old-dir",
    ),
    *("old-dir/x", "pipe", "run.sh", "was-dir", "was-dir/y", "was-file", "was-file/inner"),
)


@pytest.fixture
def layers(tmp_path: Path) -> Layers:
    return Layers(tmp_path)


def lay_out(layers: Layers) -> tuple[Effect, ...]:
    """A workspace and an upper layer that differ in every way an apply can change a path."""
    write(layers.workspace, {k: v for k, v in BEFORE.items() if k != "link"})
    os.symlink("notes.md", layers.workspace / "link")
    write(layers.upper, AFTER)
    os.symlink("keep.txt", layers.upper / "link")
    os.symlink("notes.md", layers.upper / "new-link")
    os.mkfifo(layers.upper / "pipe", 0o600)
    os.chmod(layers.upper / "run.sh", 0o700)
    os.chmod(layers.upper / "new-dir", 0o500)  # read-only: its file must go in first
    os.chmod(layers.upper / "keep-dir", 0o700)
    for path in layers.upper.rglob("*"):
        if path.name not in ("keep.txt", "keep-dir", "run.sh"):  # a change of mode keeps its owner
            os.chown(path, OWNER, OWNER, follow_symlinks=False)
    return layers.effects(*CHANGED)


def test_the_workspace_becomes_what_the_dry_run_saw(layers: Layers) -> None:
    effects = lay_out(layers)
    plan = layers.prepare(effects)
    commit(layers.workspace, plan)
    expected = snapshot(layers.upper)
    expected["."] = snapshot(layers.workspace)["."]
    assert snapshot(layers.workspace) == expected
    assert not (layers.workspace / plan.staging).exists()


def test_the_effects_come_back_as_written(layers: Layers) -> None:
    effects = lay_out(layers)
    plan = layers.prepare(effects)
    staged = {path: inode for path, (_, inode) in plan.staged.items()}
    written = {e.path: e for e in commit(layers.workspace, plan)}
    assert [e.path for e in written.values()] == list(CHANGED)
    for effect in effects:
        now = state(layers.workspace, effect.path)
        after = written[effect.path].after
        assert written[effect.path].before == effect.before
        assert after.matches(now), effect.path
        assert (after.ino, after.uid) == (now.ino, now.uid), effect.path
    # A staged file keeps the hash it was staged with, its inode the one staged.
    assert written["notes.md"].after.sha256 == sha("final")
    assert written["notes.md"].after.ino == staged["notes.md"]
    # A change of mode keeps the inode and hash that were checked.
    assert (written["run.sh"].after.ino, written["run.sh"].after.sha256) == (
        effects[CHANGED.index("run.sh")].before.ino,
        sha("echo"),
    )
    # A folder made new is recorded with the names it holds, so its undo deletes no more.
    fd = os.open(layers.workspace, os.O_RDONLY)
    try:
        assert written["new-dir"].after.sha256 == listing_digest(fd, "new-dir")
    finally:
        os.close(fd)
    assert written["gone.txt"].after == ABSENT


def test_a_file_not_as_staged_is_read_again(layers: Layers) -> None:
    """Recorded from disk, not from the plan, when the inode is not the one staged or checked
    (another program put its own file there): the undo then refuses rather than lose it."""
    write(layers.workspace, {"a.txt": "a", "m.sh": "m"})
    write(layers.upper, {"a.txt": "b", "m.sh": "m"})
    os.chmod(layers.upper / "m.sh", 0o700)
    effects = layers.effects("a.txt", "m.sh")
    plan = layers.prepare(effects)
    write(layers.workspace / plan.staging, {plan.staged["a.txt"][0] + ".x": "swapped"})
    os.replace(
        layers.workspace / plan.staging / (plan.staged["a.txt"][0] + ".x"),
        layers.workspace / plan.staging / plan.staged["a.txt"][0],
    )
    (layers.workspace / "m.sh").unlink()
    write(layers.workspace, {"m.sh": "written in between"})
    written = commit(layers.workspace, plan)
    assert [e.after.sha256 for e in written] == [sha("swapped"), sha("written in between")]


def test_a_path_swapped_for_a_symlink_is_never_followed(layers: Layers, tmp_path: Path) -> None:
    """A mode change made through a handle on the very inode: a symlink put in the file's place
    since the check is refused, and what it points to keeps its mode."""
    outside = tmp_path / "outside.txt"
    outside.write_text("the owner's")
    os.chmod(outside, 0o600)
    write(layers.workspace, {"m.sh": "m"})
    write(layers.upper, {"m.sh": "m"})
    os.chmod(layers.upper / "m.sh", 0o700)
    plan = layers.prepare(layers.effects("m.sh"))
    (layers.workspace / "m.sh").unlink()
    os.symlink(outside, layers.workspace / "m.sh")
    with pytest.raises(OSError, match=r"^m\.sh is no longer a file or directory$"):
        commit(layers.workspace, plan)
    assert stat.S_IMODE(outside.stat().st_mode) == 0o600
    assert not (layers.workspace / plan.staging).exists()


def test_the_workspace_root_may_change_mode(layers: Layers) -> None:
    os.chmod(layers.workspace, 0o700)
    root = state(layers.workspace, ".")
    wanted = FileState("dir", 0o750, sha256=root.sha256, uid=root.uid, gid=root.gid)
    plan = Plan((Effect(".", root, wanted),), frozenset({"."}), ".lancelot-staging-root")
    os.mkdir(layers.workspace / plan.staging, 0o700)
    (written,) = commit(layers.workspace, plan)
    assert stat.S_IMODE(layers.workspace.stat().st_mode) == 0o750
    assert written.after.matches(state(layers.workspace, "."))


def test_only_the_paths_left_to_do_are_changed(layers: Layers) -> None:
    """A resumed undo: what is already as wanted is left alone, and still recorded."""
    write(layers.workspace, {"a.txt": "one", "b.txt": "two", "d/": ""})
    effects = layers.effects("a.txt", "b.txt", "d")  # all deleted
    (layers.workspace / "a.txt").unlink()
    write(layers.workspace, {"c.txt": "three"})
    plan = layers.prepare(effects, resume=True)
    written = commit(layers.workspace, plan)
    assert sorted(os.listdir(layers.workspace)) == ["c.txt"]
    assert [e.after for e in written] == [ABSENT, ABSENT, ABSENT]


def test_a_resumed_undo_leaves_a_folder_already_made_again(layers: Layers) -> None:
    write(layers.workspace, {"d/x": "x"})
    made = Effect("d", ABSENT, state(layers.workspace, "d"))  # the undo of its deletion
    plan = layers.prepare((made,), resume=True)
    assert plan.todo == frozenset()
    (written,) = commit(layers.workspace, plan)
    assert written.after.matches(state(layers.workspace, "d"))
    assert os.listdir(layers.workspace) == ["d"]


def test_what_cannot_be_made_again_is_not_made(layers: Layers) -> None:
    """A socket the dry run made: no apply can make it again, and the record says so."""
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(layers.upper / "sock"))
    plan = layers.prepare(layers.effects("sock"))
    (written,) = commit(layers.workspace, plan)
    assert written.before == ABSENT
    assert written.after == ABSENT
    assert os.listdir(layers.workspace) == []


def test_a_commit_leaves_no_file_open(layers: Layers) -> None:
    effects = lay_out(layers)
    with leaves_no_file_open():
        commit(layers.workspace, layers.prepare(effects))


def test_a_symlink_that_cannot_be_pointed_elsewhere_leaves_no_stray_link(layers: Layers) -> None:
    """The new link is made beside the old and renamed over it; a folder put in its place
    since the check stops it, and the new link is removed, not left behind."""
    os.symlink("a", layers.workspace / "link")
    os.symlink("b", layers.upper / "link")
    plan = layers.prepare(layers.effects("link"))
    (layers.workspace / "link").unlink()
    write(layers.workspace, {"link/inside": "a folder now"})
    with pytest.raises(IsADirectoryError):
        commit(layers.workspace, plan)
    assert sorted(os.listdir(layers.workspace)) == ["link"]
    assert os.listdir(layers.workspace / "link") == ["inside"]


def test_a_folder_swapped_for_a_symlink_is_never_followed(layers: Layers, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    write(layers.workspace, {"sub/": ""})
    write(layers.upper, {"sub/new.txt": "new"})
    plan = layers.prepare(layers.effects("sub/new.txt"))
    (layers.workspace / "sub").rmdir()
    os.symlink(outside, layers.workspace / "sub")
    with pytest.raises(OSError, match="a symlink or file is in the way"):
        commit(layers.workspace, plan)
    assert os.listdir(outside) == []


def commit_as_this_user(base: Path) -> int:
    """Apply a folder, a link and a pipe a root-owned upper layer holds; their owners."""
    layers = Layers(base)
    write(layers.upper, {"d/": ""})
    os.symlink("d", layers.upper / "link")
    os.mkfifo(layers.upper / "pipe", 0o600)
    zero = {
        p: replace(e.after, uid=0, gid=0)
        for p, e in ((e.path, e) for e in layers.effects("d", "link", "pipe"))
    }
    effects = tuple(Effect(p, ABSENT, after) for p, after in zero.items())
    commit(layers.workspace, layers.prepare(effects))
    owners = {os.lstat(layers.workspace / p).st_uid for p in zero}
    return owners.pop() if len(owners) == 1 else -1


def test_a_lancelot_not_run_as_root_makes_what_it_applies_its_own(tmp_path: Path) -> None:
    """Only root may give a file away: run as another user, an apply makes a root-owned
    folder, link or pipe as that user's rather than failing (as root, run as nobody)."""
    if os.geteuid() != 0:
        assert commit_as_this_user(tmp_path) == os.geteuid()
        return
    assert commit_as_this_user(tmp_path) == 0  # root gives them to their owner, root
    with shared_folder() as base:  # /tmp: a user other than root can reach it
        os.chown(base, NOBODY, NOBODY)
        assert as_nobody(lambda: str(commit_as_this_user(base))) == str(NOBODY)


def test_a_folder_replaced_by_a_symlink_is_undone(layers: Layers) -> None:
    """rm -r d && ln -s elsewhere d, applied then undone: what was under the folder is under
    no link once the link is gone, so the undo puts the folder and its file back."""
    write(layers.workspace, {"d/x": "x"})
    os.symlink("elsewhere", layers.upper / "d")
    effects = (
        Effect("d", state(layers.workspace, "d"), state(layers.upper, "d")),
        Effect("d/x", state(layers.workspace, "d/x"), ABSENT),
    )
    written = commit(layers.workspace, layers.prepare(effects))
    assert [e.after.kind for e in written] == ["symlink", "absent"]
    undo = tuple(sorted((e.inverse() for e in written), key=lambda e: e.path))
    plan = prepare(layers.workspace, undo, ObjectSource(layers.store), None, resume=True)
    assert plan.todo == {"d", "d/x"}
    commit(layers.workspace, plan)
    assert (layers.workspace / "d" / "x").read_text() == "x"
    assert not (layers.workspace / "d").is_symlink()
