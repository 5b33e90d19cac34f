"""scan_upper on its own, over upper layers laid out by hand on the host as overlayfs leaves
them (whiteouts, opaque folders), so every case is exact and no sandbox is needed."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import tempfile
from pathlib import Path

import pytest

from core.tools.effects import scan
from core.tools.effects.files import DIR_FLAGS, listing_digest
from core.tools.effects.scan import EffectsTooLarge, scan_upper
from tests.core.tools.effects.support import commit, git
from tests.fakes.descriptors import leaves_no_file_open

OPAQUE = "user.overlay.opaque"


class Layers:
    """A workspace (`lower`) and a dry run's upper layer over it."""

    def __init__(self, root: Path) -> None:
        self.lower = root / "lower"
        self.upper = root / "upper"
        self.lower.mkdir(mode=0o700)
        self.upper.mkdir(mode=0o700)
        os.chmod(self.lower, 0o700)
        os.chmod(self.upper, 0o700)

    def write(self, layer: Path, files: dict[str, str]) -> None:
        """Files (a name ending in "/" is a folder) under `layer`."""
        for name, text in files.items():
            path = layer / name
            if name.endswith("/"):
                path.mkdir(parents=True, exist_ok=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)

    def whiteout(self, name: str) -> None:
        """Mark `name` deleted in the upper layer."""
        path = self.upper / name
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(0, 0))

    def opaque(self, name: str) -> None:
        """Make the upper folder `name` hide what the workspace has in it."""
        path = self.upper / name
        path.mkdir(parents=True, exist_ok=True)
        os.setxattr(path, OPAQUE, b"y")

    def kinds(self) -> dict[str, str]:
        """path -> effect kind (each path once)."""
        effects = scan_upper(self.upper, self.lower, OPAQUE).effects
        found = {e.path: e.kind for e in effects}
        assert len(found) == len(effects), [e.path for e in effects]
        return found


@pytest.fixture
def layers(tmp_path: Path) -> Layers:
    return Layers(tmp_path)


def test_an_empty_upper_layer_changes_nothing(layers: Layers) -> None:
    layers.write(layers.lower, {"a": "1", "d/b": "2"})
    assert layers.kinds() == {}


def test_the_workspace_roots_mode_is_an_effect_only_when_it_changes(layers: Layers) -> None:
    os.chmod(layers.upper, 0o500)
    assert layers.kinds() == {".": "mode_changed"}


def test_new_files_and_folders_are_created_with_all_they_hold(layers: Layers) -> None:
    layers.write(layers.upper, {"new/inner/f": "1", "top": "2"})
    assert layers.kinds() == {
        "new": "created",
        "new/inner": "created",
        "new/inner/f": "created",
        "top": "created",
    }


def test_a_copied_up_file_is_an_effect_only_when_it_changed(layers: Layers) -> None:
    layers.write(layers.lower, {"d/same": "1", "d/changed": "1", "d/mode": "1"})
    layers.write(layers.upper, {"d/same": "1", "d/changed": "2", "d/mode": "1"})
    os.chmod(layers.upper / "d" / "mode", 0o600)
    os.chmod(layers.lower / "d" / "mode", 0o644)
    assert layers.kinds() == {"d/changed": "modified", "d/mode": "mode_changed"}


def test_a_folder_whose_mode_changed_is_an_effect_and_is_still_walked(
    layers: Layers,
) -> None:
    layers.write(layers.lower, {"d/f": "1", "same/g": "1"})
    layers.write(layers.upper, {"d/f": "2", "same/g": "2"})
    os.chmod(layers.lower / "d", 0o700)
    os.chmod(layers.upper / "d", 0o500)
    os.chmod(layers.lower / "same", 0o700)
    os.chmod(layers.upper / "same", 0o700)
    assert layers.kinds() == {"d": "mode_changed", "d/f": "modified", "same/g": "modified"}


def test_a_whiteout_deletes_what_the_workspace_had_and_nothing_else(layers: Layers) -> None:
    layers.write(layers.lower, {"f": "1", "d/a": "1", "d/sub/b": "2"})
    for name in ("f", "d", "never-there"):
        layers.whiteout(name)
    assert layers.kinds() == {
        "f": "deleted",
        "d": "deleted",
        "d/a": "deleted",
        "d/sub": "deleted",
        "d/sub/b": "deleted",
    }


def test_a_whiteout_inside_a_new_folder_is_nothing(layers: Layers) -> None:
    layers.write(layers.upper, {"new/f": "1"})
    layers.whiteout("new/gone")
    assert layers.kinds() == {"new": "created", "new/f": "created"}


def test_an_opaque_folder_hides_everything_the_workspace_had_in_it(layers: Layers) -> None:
    layers.write(layers.lower, {"d/one": "1", "d/two": "2", "d/sub/three": "3", "d/kept": "k"})
    layers.opaque("d")
    layers.write(layers.upper, {"d/kept": "k", "d/new": "n"})
    assert layers.kinds() == {
        "d/one": "deleted",
        "d/two": "deleted",
        "d/sub": "deleted",
        "d/sub/three": "deleted",
        "d/new": "created",
    }


def test_an_opaque_root_hides_the_whole_workspace(layers: Layers) -> None:
    layers.write(layers.lower, {"a": "1", "d/b": "2"})
    os.setxattr(layers.upper, OPAQUE, b"y")
    assert layers.kinds() == {"a": "deleted", "d": "deleted", "d/b": "deleted"}


def test_a_folder_inside_an_opaque_one_hides_its_workspace_content_too(
    layers: Layers,
) -> None:
    layers.write(layers.lower, {"d/sub/old": "1"})
    layers.opaque("d")
    layers.write(layers.upper, {"d/sub/new": "2"})
    assert layers.kinds() == {"d/sub/old": "deleted", "d/sub/new": "created"}


def test_only_the_marker_makes_a_folder_opaque(layers: Layers) -> None:
    layers.write(layers.lower, {"d/one": "1"})
    layers.write(layers.upper, {"d/new": "n"})
    os.setxattr(layers.upper / "d", OPAQUE, b"n")
    assert layers.kinds() == {"d/new": "created"}


def test_a_folder_where_a_file_was_replaces_it(layers: Layers) -> None:
    layers.write(layers.lower, {"x": "1"})
    layers.write(layers.upper, {"x/inner": "2"})
    assert layers.kinds() == {"x": "replaced", "x/inner": "created"}


def test_a_file_where_a_folder_was_replaces_it_and_deletes_what_it_held(
    layers: Layers,
) -> None:
    layers.write(layers.lower, {"x/inner": "1", "x/sub/deep": "2"})
    layers.write(layers.upper, {"x": "file now"})
    assert layers.kinds() == {
        "x": "replaced",
        "x/inner": "deleted",
        "x/sub": "deleted",
        "x/sub/deep": "deleted",
    }


def test_a_socket_left_behind_is_no_effect(layers: Layers, tmp_path: Path) -> None:
    """A socket cannot be carried over; a fifo beside it can."""
    os.mkfifo(layers.upper / "pipe")
    cwd = os.getcwd()
    os.chdir(layers.upper)  # a socket's path must be short
    try:
        with socket.socket(socket.AF_UNIX) as server:
            server.bind("sock")
            assert layers.kinds() == {"pipe": "created"}
    finally:
        os.chdir(cwd)


def deep(levels: int) -> str:
    return "/".join(["d"] * levels)


def test_folders_too_deep_to_show_are_refused(
    layers: Layers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made at the bound they are shown; one level deeper and the scan refuses."""
    monkeypatch.setattr(scan, "MAX_DEPTH", 3)
    layers.write(layers.upper, {deep(3) + "/": ""})
    assert deep(3) in layers.kinds()
    layers.write(layers.upper, {deep(4) + "/": ""})
    with pytest.raises(EffectsTooLarge, match="over 3 levels deep"):
        layers.kinds()


def test_changes_too_deep_inside_the_workspaces_folders_are_refused(
    layers: Layers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same bound holds where the folders were already there."""
    monkeypatch.setattr(scan, "MAX_DEPTH", 3)
    layers.write(layers.lower, {deep(3) + "/f": "1", deep(4) + "/g": "1"})
    layers.write(layers.upper, {deep(3) + "/f": "2"})
    assert layers.kinds() == {deep(3) + "/f": "modified"}
    layers.write(layers.upper, {deep(4) + "/g": "2"})
    with pytest.raises(EffectsTooLarge, match="over 3 levels deep"):
        layers.kinds()


def test_folders_removed_too_deep_to_show_are_refused(
    layers: Layers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "MAX_DEPTH", 3)
    layers.write(layers.lower, {deep(3) + "/f": "1"})
    layers.whiteout("d")
    assert deep(3) + "/f" in layers.kinds()
    layers.write(layers.lower, {deep(4) + "/f": "1"})
    with pytest.raises(EffectsTooLarge, match="removed directories over 3 levels deep"):
        layers.kinds()


def test_too_many_effects_are_refused(layers: Layers, monkeypatch: pytest.MonkeyPatch) -> None:
    """At the bound the effects are shown; one more and the scan refuses."""
    monkeypatch.setattr(scan, "MAX_EFFECTS", 3)
    layers.write(layers.upper, {"a": "1", "b": "2", "c": "3"})
    assert len(layers.kinds()) == 3
    layers.write(layers.upper, {"d": "4"})
    with pytest.raises(EffectsTooLarge, match="more than 3 paths; nothing was applied"):
        layers.kinds()


@pytest.fixture
def repo(layers: Layers) -> tuple[str, str]:
    """A repository in the workspace with main at its second commit; (first, second)."""
    path = layers.lower / "repo"
    path.mkdir()
    git(path, "init", "-q")
    first = commit(path, "one")
    return first, commit(path, "two")


def test_a_ref_moved_back_in_the_upper_layer_is_read_and_judged(
    layers: Layers, repo: tuple[str, str]
) -> None:
    first, second = repo
    layers.write(layers.upper, {"repo/.git/refs/heads/main": first + "\n"})
    [changes] = scan_upper(layers.upper, layers.lower, OPAQUE).git
    assert [(r.name, r.before, r.after) for r in changes.refs] == [
        ("refs/heads/main", second, first)
    ]
    assert changes.lost == ("refs/heads/main",)


def test_a_ref_the_dry_run_made_a_symlink_or_a_folder_is_not_read(
    layers: Layers, repo: tuple[str, str], tmp_path: Path
) -> None:
    """What the dry run left at a ref's path is read only when it is a regular file."""
    first, _ = repo
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text(first + "\n")
    heads = layers.upper / "repo" / ".git" / "refs" / "heads"
    heads.mkdir(parents=True)
    (heads / "main").symlink_to(elsewhere)
    (heads / "side").mkdir()
    (heads / "side" / "x").write_text(first + "\n")
    [changes] = scan_upper(layers.upper, layers.lower, OPAQUE).git
    assert {r.name: r.after for r in changes.refs} == {
        "refs/heads/main": None,
        "refs/heads/side/x": first,
    }


def test_a_fifo_where_a_ref_was_is_not_waited_on(layers: Layers, repo: tuple[str, str]) -> None:
    fifo = layers.lower / "repo" / ".git" / "refs" / "heads" / "stuck"
    os.mkfifo(fifo)
    first, _ = repo
    layers.write(layers.upper, {"repo/.git/refs/heads/stuck": first + "\n"})
    [changes] = scan_upper(layers.upper, layers.lower, OPAQUE).git
    assert {r.name: (r.before, r.after) for r in changes.refs} == {
        "refs/heads/stuck": (None, first)
    }


def test_git_files_are_read_up_to_the_limit(
    layers: Layers, repo: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ref file is read up to READ_LIMIT bytes: a value cut there is no commit id."""
    first, _ = repo
    layers.write(layers.upper, {"repo/.git/refs/heads/new": first + "\n"})
    monkeypatch.setattr(scan, "READ_LIMIT", 40)
    [changes] = scan_upper(layers.upper, layers.lower, OPAQUE).git
    assert {r.name: r.after for r in changes.refs} == {"refs/heads/new": first}
    monkeypatch.setattr(scan, "READ_LIMIT", 39)
    [changes] = scan_upper(layers.upper, layers.lower, OPAQUE).git
    assert changes.broken == ("refs/heads/new",)


def test_a_socket_where_a_ref_would_be_is_no_ref(layers: Layers, repo: tuple[str, str]) -> None:
    """Opening a socket fails (ENXIO): it is no file, so no ref, not a crash of the scan."""
    first, second = repo
    cwd = os.getcwd()
    os.chdir(layers.lower / "repo" / ".git" / "refs" / "heads")
    try:
        with socket.socket(socket.AF_UNIX) as server:
            server.bind("sock")
            layers.write(layers.upper, {"repo/.git/refs/heads/main": first + "\n"})
            [changes] = scan_upper(layers.upper, layers.lower, OPAQUE).git
    finally:
        os.chdir(cwd)
    assert {r.name: (r.before, r.after) for r in changes.refs} == {
        "refs/heads/main": (second, first)
    }
    assert changes.lost == ("refs/heads/main",)


def test_a_symlink_at_a_refs_path_in_the_workspace_is_not_followed(
    layers: Layers, repo: tuple[str, str], tmp_path: Path
) -> None:
    """A link out of the workspace holding the old commit reaches nothing: the reset back
    still loses it."""
    first, second = repo
    outside = tmp_path / "outside"
    outside.write_text(second + "\n")
    (layers.lower / "repo" / ".git" / "refs" / "heads" / "link").symlink_to(outside)
    layers.write(layers.upper, {"repo/.git/refs/heads/main": first + "\n"})
    [changes] = scan_upper(layers.upper, layers.lower, OPAQUE).git
    assert changes.lost == ("refs/heads/main",)


def test_a_scan_leaves_no_file_open(layers: Layers, repo: tuple[str, str]) -> None:
    first, _ = repo
    layers.write(layers.lower, {"d/a": "1", "gone/b": "2", "x/c": "3"})
    layers.write(layers.upper, {"d/a": "2", "new/f": "1", "x": "file"})
    layers.write(layers.upper, {"repo/.git/refs/heads/main": first + "\n"})
    layers.whiteout("gone")
    with leaves_no_file_open():
        assert scan_upper(layers.upper, layers.lower, OPAQUE).effects


def test_symlinks_are_never_followed_in_either_layer(layers: Layers) -> None:
    """A link the dry run made to a folder is a link; a folder where the workspace had a
    link replaces the link; a deleted dangling link is deleted."""
    layers.write(layers.lower, {"real/f": "1"})
    (layers.lower / "was-link").symlink_to("real")
    (layers.lower / "dangling").symlink_to("nowhere")
    (layers.upper / "new-link").symlink_to("real")
    (layers.upper / "new-dangling").symlink_to("nowhere")
    layers.write(layers.upper, {"was-link/x": "2"})
    layers.whiteout("dangling")
    assert layers.kinds() == {
        "new-link": "created",
        "new-dangling": "created",
        "was-link": "replaced",
        "was-link/x": "created",
        "dangling": "deleted",
    }


def test_a_deleted_folders_state_names_what_it_held(layers: Layers) -> None:
    """What an undo or a later check compares: the names the folder had."""
    layers.write(layers.lower, {"d/a": "1", "d/b": "2"})
    layers.whiteout("d")
    [folder] = [e for e in scan_upper(layers.upper, layers.lower, OPAQUE).effects if e.path == "d"]
    lower = os.open(layers.lower, DIR_FLAGS)
    try:
        assert folder.before.sha256 == listing_digest(lower, "d")
    finally:
        os.close(lower)
    assert folder.before.sha256 is not None


def test_a_ref_under_what_was_a_symlinked_folder_is_new(
    layers: Layers, repo: tuple[str, str], tmp_path: Path
) -> None:
    """The workspace's refs/remotes was a link out of it, to a folder holding a ref: what
    lies behind the link was never the repository's, so the ref the dry run writes there
    is created, not moved."""
    first, second = repo
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x").write_text(second + "\n")
    (layers.lower / "repo" / ".git" / "refs" / "remotes").symlink_to(outside)
    layers.write(layers.upper, {"repo/.git/refs/remotes/x": first + "\n"})
    [changes] = scan_upper(layers.upper, layers.lower, OPAQUE).git
    assert {r.name: r.kind for r in changes.refs} == {"refs/remotes/x": "created"}


def test_a_ref_where_a_folder_of_refs_was_is_new(layers: Layers, repo: tuple[str, str]) -> None:
    """The folder the workspace had at the ref's path is no ref file: the ref is created
    (and the refs the folder held are deleted)."""
    first, second = repo
    layers.write(layers.lower, {"repo/.git/refs/heads/x/y": second + "\n"})
    layers.write(layers.upper, {"repo/.git/refs/heads/x": first + "\n"})
    [changes] = scan_upper(layers.upper, layers.lower, OPAQUE).git
    assert {r.name: r.kind for r in changes.refs} == {
        "refs/heads/x": "created",
        "refs/heads/x/y": "deleted",
    }


def scan_as_nobody(layers: Layers) -> str:
    """Scan as `nobody` (root reads every file), in this process so that the mutation
    runner sees what it runs: "scanned", or the name of the error it raised."""
    for top, dirs, files in os.walk(layers.lower.parent):
        for name in [top, *(os.path.join(top, n) for n in dirs + files)]:
            os.chown(name, NOBODY, NOBODY, follow_symlinks=False)
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        scan_upper(layers.upper, layers.lower, OPAQUE)
    except Exception as exc:  # the test compares which error it was
        return type(exc).__name__
    finally:
        os.seteuid(0)
        os.setegid(0)
    return "scanned"


NOBODY = 65534


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a child as nobody")
def test_a_ref_file_lancelot_cannot_read_fails_the_scan() -> None:
    """An unreadable ref is not taken for a missing one (which could hide what it keeps)."""
    top = Path(tempfile.mkdtemp(prefix="lancelot-scan-"))
    try:
        layers = Layers(top)
        path = layers.lower / "repo"
        path.mkdir()
        git(path, "init", "-q")
        first = commit(path, "one")
        layers.write(layers.upper, {"repo/.git/refs/heads/new": first + "\n"})
        assert scan_as_nobody(layers) == "scanned"
        (path / ".git" / "refs" / "heads" / "main").chmod(0)
        assert scan_as_nobody(layers) == "PermissionError"
    finally:
        shutil.rmtree(top)
