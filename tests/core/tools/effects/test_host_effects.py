"""The effects of the file tools' own writes, deletes and moves, read from a workspace laid out
by hand: new modes, folders made on the way, what is refused, and where contents come from."""

from __future__ import annotations

import hashlib
import os
import resource
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.tools.effects import host
from core.tools.effects.files import DirHandles, PathBlocked
from core.tools.effects.host import (
    BytesSource,
    MovedSource,
    TreeTooLarge,
    delete_effects,
    move_effects,
    tree_states,
    write_effects,
)
from core.tools.effects.model import ABSENT, Effect, FileState
from tests.fakes.descriptors import leaves_no_file_open


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def handles(tmp_path: Path) -> Iterator[DirHandles]:
    """A workspace with a private file, a folder, a link out of it and a FIFO."""
    (tmp_path / "notes.md").write_bytes(b"draft")
    os.chmod(tmp_path / "notes.md", 0o600)
    (tmp_path / "docs" / "deep").mkdir(parents=True)
    (tmp_path / "docs" / "a.txt").write_bytes(b"a")
    os.symlink(tmp_path / "docs", tmp_path / "out")
    os.mkfifo(tmp_path / "pipe")
    with DirHandles(tmp_path) as opened:
        yield opened


def test_a_new_file_is_readable_by_all_in_new_folders_made_on_the_way(
    handles: DirHandles,
) -> None:
    effects = write_effects(handles, "docs/new/deeper/x.txt", b"fresh")
    assert effects == [
        Effect("docs/new", ABSENT, FileState("dir", 0o755)),
        Effect("docs/new/deeper", ABSENT, FileState("dir", 0o755)),
        Effect("docs/new/deeper/x.txt", ABSENT, FileState("file", 0o644, 5, sha(b"fresh"))),
    ]


def test_a_rewritten_file_keeps_its_mode(handles: DirHandles) -> None:
    (effect,) = write_effects(handles, "notes.md", b"final")
    assert (effect.kind, effect.after) == ("modified", FileState("file", 0o600, 5, sha(b"final")))


def test_a_write_never_replaces_a_folder_a_link_or_a_fifo(handles: DirHandles) -> None:
    with pytest.raises(IsADirectoryError):
        write_effects(handles, "docs", b"x")
    for path in ("out", "pipe"):
        with pytest.raises(FileExistsError, match=rf"not a regular file: '{path}'"):
            write_effects(handles, path, b"x")


def test_a_change_under_a_file_or_a_link_is_blocked(handles: DirHandles) -> None:
    with pytest.raises(PathBlocked, match=r"^\[Errno 20\] notes\.md: a symlink or file") as file:
        write_effects(handles, "notes.md/x.txt", b"x")
    assert not file.value.link
    with pytest.raises(PathBlocked, match=r"^\[Errno 20\] out: a symlink or file") as link:
        move_effects(handles, "notes.md", "out/x.txt")
    assert link.value.link
    # A path under a link reads as something else (not nothing) already: never written.
    with pytest.raises(FileExistsError, match=r"not a regular file: 'out/x\.txt'"):
        write_effects(handles, "out/x.txt", b"x")


def test_a_deleted_folder_is_bound_to_the_names_it_held(handles: DirHandles) -> None:
    effects = delete_effects(handles, "docs")
    assert [e.path for e in effects] == ["docs", "docs/a.txt", "docs/deep"]
    assert all(not e.after.exists for e in effects)
    assert effects[0].before.sha256 == sha(b"a.txt\0deep")
    assert effects[1].before.sha256 == sha(b"a")


def test_a_tree_of_exactly_the_limit_is_taken_and_one_path_more_is_refused(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for n in range(host.MAX_TREE):  # with the folder itself: one path more than the limit
        (tree / f"{n:05}").touch()
    with DirHandles(tmp_path) as handles, pytest.raises(TreeTooLarge, match=r"20,000 paths$"):
        tree_states(handles, "tree")
    os.unlink(tree / "00000")
    with DirHandles(tmp_path) as handles:
        assert len(tree_states(handles, "tree")) == host.MAX_TREE


def test_a_folder_moved_onto_a_folder_is_bound_to_the_names_that_one_held(
    handles: DirHandles, tmp_path: Path
) -> None:
    (tmp_path / "dest" / "deep").mkdir(parents=True)
    (tmp_path / "dest" / "kept.txt").write_bytes(b"")
    effects, origins = move_effects(handles, "docs", "dest")
    onto = {e.path: e for e in effects}
    assert onto["dest"].before.sha256 == sha(b"deep\0kept.txt")
    assert onto["dest/deep"].before.sha256 == sha(b"")
    assert onto["dest/a.txt"].after == FileState("file", 0o644, 1, sha(b"a"))
    assert origins == {"dest": "docs", "dest/a.txt": "docs/a.txt", "dest/deep": "docs/deep"}


def test_a_moved_file_is_read_from_where_it_is_never_through_a_link(
    handles: DirHandles, tmp_path: Path
) -> None:
    moved = Effect("elsewhere.txt", ABSENT, FileState("file", 0o644, 1, sha(b"a")))
    fd = MovedSource(handles, {"elsewhere.txt": "docs/a.txt"}).open(moved)
    with os.fdopen(fd, "rb") as opened:
        assert opened.read() == b"a"
    # "out" is a link to docs: what lies behind it is not the workspace's to move.
    with pytest.raises(PathBlocked):
        MovedSource(handles, {"elsewhere.txt": "out/a.txt"}).open(moved)


def test_written_content_is_handed_over_from_its_start() -> None:
    effect = Effect("x.txt", ABSENT, FileState("file", 0o644, 5, sha(b"fresh")))
    fd = BytesSource({"x.txt": b"fresh"}).open(effect)
    with os.fdopen(fd, "rb") as opened:
        assert opened.read() == b"fresh"


def test_content_that_cannot_be_held_fails_and_leaves_nothing_open() -> None:
    effect = Effect("big", ABSENT, FileState("file", 0o644, 4096, sha(b"\0" * 4096)))
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, limits[1]))
    try:
        with leaves_no_file_open(), pytest.raises(OSError, match="File too large"):
            BytesSource({"big": b"\0" * 4096}).open(effect)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, previous)
