"""The undo store: a backup is a hard link to the workspace file when nothing else can
rewrite that inode, a checked copy otherwise; content-addressed, private, and a file that
changed while it was kept is refused, leaving nothing behind."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.tools.effects.files import read_state
from core.tools.effects.model import FileState
from core.tools.effects.objects import ObjectStore
from tests.core.tools.effects.support import as_nobody, shared_folder


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[int]:
    folder = tmp_path / "workspace"
    folder.mkdir()
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield fd
    finally:
        os.close(fd)


def write(dir_fd: int, name: str, content: bytes) -> FileState:
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=dir_fd)
    try:
        os.write(fd, content)
    finally:
        os.close(fd)
    return read_state(dir_fd, name)


def inode(dir_fd: int, name: str) -> int:
    return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_ino


def leftovers(store: ObjectStore) -> list[str]:
    return [p.name for p in store.root.rglob(".*.tmp")]


def test_a_file_with_one_name_is_kept_as_a_link(workspace: int, tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    state = write(workspace, "a.txt", b"alpha")
    assert store.keep(workspace, "a.txt", state) == 5
    assert state.sha256 == hashlib.sha256(b"alpha").hexdigest()
    kept = store.path(state.sha256)
    assert kept == store.root / state.sha256[:2] / state.sha256
    assert kept.stat().st_ino == inode(workspace, "a.txt")  # no copy made
    assert store.has(state.sha256)


def test_content_kept_already_costs_nothing(workspace: int, tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    first = write(workspace, "a.txt", b"same")
    second = write(workspace, "b.txt", b"same")
    assert store.keep(workspace, "a.txt", first) == 4
    assert store.keep(workspace, "b.txt", second) == 0


def test_a_file_with_another_name_is_copied(workspace: int, tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    state = write(workspace, "a.txt", b"alpha")
    os.link("a.txt", "twin", src_dir_fd=workspace, dst_dir_fd=workspace)
    state = read_state(workspace, "a.txt")
    assert state.sha256 is not None
    assert store.keep(workspace, "a.txt", state) == 5
    kept = store.path(state.sha256)
    assert kept.stat().st_ino != inode(workspace, "a.txt")  # "twin" could rewrite it
    assert kept.read_bytes() == b"alpha"


def test_a_file_seen_with_other_times_is_copied_not_linked(workspace: int, tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    state = write(workspace, "a.txt", b"alpha")
    seen = dataclasses.replace(state, mtime_ns=state.mtime_ns - 1)
    assert store.keep(workspace, "a.txt", seen) == 5
    assert store.path(state.sha256 or "").stat().st_ino != inode(workspace, "a.txt")
    assert leftovers(store) == []


def test_a_file_seen_with_another_size_is_copied_not_linked(workspace: int, tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    state = write(workspace, "a.txt", b"alpha")
    seen = dataclasses.replace(state, size=4)  # what a truncate meanwhile would show
    assert store.keep(workspace, "a.txt", seen) == 4
    assert store.path(state.sha256 or "").stat().st_ino != inode(workspace, "a.txt")


def test_a_file_that_changed_since_it_was_seen_is_refused(workspace: int, tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    state = write(workspace, "a.txt", b"alpha")
    write(workspace, "b.txt", b"other")
    os.replace("b.txt", "a.txt", src_dir_fd=workspace, dst_dir_fd=workspace)  # a new inode
    with pytest.raises(OSError, match=r"^a\.txt changed while it was being backed up$"):
        store.keep(workspace, "a.txt", state)
    assert not store.has(state.sha256 or "")
    assert leftovers(store) == []


def test_a_workspace_on_another_filesystem_is_copied(tmp_path: Path) -> None:
    if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == tmp_path.stat().st_dev:
        pytest.skip("no second filesystem here")
    store = ObjectStore(tmp_path / "objects")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as other:
        fd = os.open(other, os.O_RDONLY | os.O_DIRECTORY)
        try:
            state = write(fd, "a.txt", b"alpha")
            assert store.keep(fd, "a.txt", state) == 5
            assert store.path(state.sha256 or "").read_bytes() == b"alpha"
        finally:
            os.close(fd)


def test_a_big_file_is_copied_whole(workspace: int, tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    content = os.urandom(3 << 20)  # more than one block of the copy
    state = write(workspace, "big", content)
    os.link("big", "twin", src_dir_fd=workspace, dst_dir_fd=workspace)
    state = read_state(workspace, "big")
    assert store.keep(workspace, "big", state) == len(content)
    assert store.path(state.sha256 or "").read_bytes() == content


def test_only_a_hashed_file_can_be_kept(workspace: int, tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    os.mkdir("d", dir_fd=workspace)
    with pytest.raises(ValueError, match=r"^only a hashed file can be kept$"):
        store.keep(workspace, "d", read_state(workspace, "d"))


def test_the_store_is_private(workspace: int, tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    state = write(workspace, "a.txt", b"alpha")
    store.keep(workspace, "a.txt", state)
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700
    assert stat.S_IMODE(store.path(state.sha256 or "").parent.stat().st_mode) == 0o700


def test_an_object_is_read_back_and_forgotten(workspace: int, tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    state = write(workspace, "a.txt", b"alpha")
    store.keep(workspace, "a.txt", state)
    sha = state.sha256 or ""
    fd = store.open(sha)
    try:
        assert os.read(fd, 100) == b"alpha"
    finally:
        os.close(fd)
    store.remove(sha)
    assert not store.has(sha)
    store.remove(sha)  # missing is fine
    with pytest.raises(FileNotFoundError):
        store.open(sha)


def test_an_object_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    sha = hashlib.sha256(b"x").hexdigest()
    store.path(sha).parent.mkdir()
    (tmp_path / "elsewhere").write_text("x")
    store.path(sha).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError, match="symbolic links"):
        store.open(sha)


def test_a_store_opens_again_over_its_own_objects_and_makes_its_parents(
    workspace: int, tmp_path: Path
) -> None:
    root = tmp_path / "home" / "undo" / "objects"  # none of it there yet
    state = write(workspace, "a.txt", b"alpha")
    ObjectStore(root).keep(workspace, "a.txt", state)
    again = ObjectStore(root)  # a restart
    assert again.has(state.sha256 or "")


def test_objects_sharing_a_prefix_share_its_folder(workspace: int, tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    by_prefix: dict[str, bytes] = {}
    for n in range(5000):  # two contents whose hashes start alike (1 in 256)
        content = str(n).encode()
        prefix = hashlib.sha256(content).hexdigest()[:2]
        if prefix in by_prefix:
            pair = (by_prefix[prefix], content)
            break
        by_prefix[prefix] = content
    for n, content in enumerate(pair):
        state = write(workspace, f"f{n}", content)
        assert store.keep(workspace, f"f{n}", state) == len(content)
    assert len(list(store.root.iterdir())) == 1


def test_a_copy_leaves_no_file_open(workspace: int, tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    write(workspace, "a.txt", b"alpha")
    os.link("a.txt", "twin", src_dir_fd=workspace, dst_dir_fd=workspace)
    state = read_state(workspace, "a.txt")
    before = len(os.listdir("/proc/self/fd"))
    store.keep(workspace, "a.txt", state)
    assert len(os.listdir("/proc/self/fd")) == before


@pytest.mark.skipif(os.geteuid() != 0, reason="root reads what its mode forbids")
def test_root_links_a_file_its_mode_makes_unreadable(workspace: int, tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    write(workspace, "locked", b"alpha")
    os.chmod("locked", 0, dir_fd=workspace)
    state = read_state(workspace, "locked")
    assert store.keep(workspace, "locked", state) == 5
    assert store.path(state.sha256 or "").stat().st_ino == inode(workspace, "locked")


def test_a_file_its_owner_cannot_read_is_neither_linked_nor_copied() -> None:
    # Not root: a link to it could never be read back, and a copy cannot read it either.
    with shared_folder() as folder:
        assert as_nobody(lambda: keep_both(folder)) == "linked True, locked refused, kept False"


def keep_both(folder: Path) -> str:
    """As a user that is not root: keep a readable file, then one its mode locks."""
    store = ObjectStore(folder / "objects")
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        readable = write(fd, "readable", b"open")
        store.keep(fd, "readable", readable)
        linked = store.path(readable.sha256 or "").stat().st_ino == inode(fd, "readable")
        locked = write(fd, "locked", b"alpha")
        os.chmod("locked", 0, dir_fd=fd)
        try:
            store.keep(fd, "locked", locked)
        except PermissionError:
            return f"linked {linked}, locked refused, kept {store.has(locked.sha256 or '')}"
        return f"linked {linked}, locked kept"
    finally:
        os.close(fd)
