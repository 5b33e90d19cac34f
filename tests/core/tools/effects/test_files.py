"""Reading paths without following links: each kind of path, content and folder hashes, the
hash a file untouched since keeps, and the directory handles that never leave the tree."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import signal
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from core.tools.effects.files import (
    BLOCK,
    BLOCKED,
    FILE_FLAGS,
    DirHandles,
    PathBlocked,
    is_whiteout,
    kind_of,
    listing_digest,
    read_state,
)
from core.tools.effects.model import ABSENT, FileState
from tests.core.tools.effects.support import as_nobody, shared_folder


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def open_fds() -> int:
    """How many files this process has open."""
    return len(os.listdir("/proc/self/fd"))


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """TimeoutError instead of waiting past `seconds` (a FIFO opened to be read waits for a
    writer: a reader that could, would hang the suite)."""

    def late(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"still waiting after {seconds} s")

    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A tree with a file, a folder, a link out of the tree and a FIFO."""
    (tmp_path / "notes.md").write_bytes(b"draft")
    os.chmod(tmp_path / "notes.md", 0o640)
    (tmp_path / "docs" / "deep").mkdir(parents=True)
    (tmp_path / "docs" / "deep" / "a.txt").write_bytes(b"deep a")
    (tmp_path / "docs" / "b.txt").write_bytes(b"b")
    os.symlink("/etc", tmp_path / "out")
    os.mkfifo(tmp_path / "pipe", 0o600)
    return tmp_path


def test_each_kind_of_path_has_its_name(root: Path) -> None:
    assert kind_of(os.lstat(root / "notes.md").st_mode) == "file"
    assert kind_of(os.lstat(root / "docs").st_mode) == "dir"
    assert kind_of(os.lstat(root / "out").st_mode) == "symlink"
    assert kind_of(os.lstat(root / "pipe").st_mode) == "fifo"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(root / "sock"))
        assert kind_of(os.lstat(root / "sock").st_mode) == "other"


def test_only_a_character_device_zero_zero_is_a_whiteout(root: Path) -> None:
    os.mknod(root / "gone", stat.S_IFCHR | 0o600, os.makedev(0, 0))
    os.mknod(root / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    assert is_whiteout(os.lstat(root / "gone"))
    assert not is_whiteout(os.lstat(root / "null"))
    assert not is_whiteout(os.lstat(root / "notes.md"))  # a regular file has st_rdev 0 too


def test_a_file_is_read_with_its_content_hash_mode_size_and_owner(root: Path) -> None:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        state = read_state(fd, "notes.md")
    finally:
        os.close(fd)
    info = os.lstat(root / "notes.md")
    assert state == FileState(
        "file", 0o640, 5, sha(b"draft"), None,
        info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_uid, info.st_gid,
    )  # fmt: skip


def test_a_file_is_opened_without_following_a_link_waiting_on_a_fifo_or_leaking(
    root: Path,
) -> None:
    dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(OSError, match=r"Too many levels of symbolic links") as link:
            os.open("out", FILE_FLAGS, dir_fd=dir_fd)
        assert link.value.errno == errno.ELOOP
        with within(5):
            fd = os.open("pipe", FILE_FLAGS, dir_fd=dir_fd)  # no writer: no wait either
        os.close(fd)
        fd = os.open("notes.md", FILE_FLAGS, dir_fd=dir_fd)
        assert not os.get_inheritable(fd)  # a command started meanwhile does not get it
        os.close(fd)
    finally:
        os.close(dir_fd)


def test_a_file_swapped_for_a_fifo_while_it_is_read_is_told_as_the_fifo(root: Path) -> None:
    """The swap lands between the read's lstat and its open now and then: whichever it
    catches, a FIFO is never read as content."""
    os.link(root / "notes.md", root / "swapped")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            for source in ("pipe", "notes.md"):
                os.link(root / source, root / "next")
                os.rename(root / "next", root / "swapped")

    swapper = threading.Thread(target=swap)
    swapper.start()
    seen: set[tuple[str, str | None]] = set()
    try:
        with DirHandles(root) as handles, within(10):
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                state = handles.state("swapped")
                seen.add((state.kind, state.sha256))
    finally:
        stop.set()
        swapper.join()
    assert seen == {("file", sha(b"draft")), ("fifo", None)}


def test_a_file_larger_than_one_read_is_hashed_whole(root: Path) -> None:
    data = os.urandom(2 * BLOCK + 17)
    (root / "big").write_bytes(data)
    with DirHandles(root) as handles:
        assert handles.state("big").sha256 == sha(data)


def test_links_folders_and_fifos_are_read_without_being_opened(root: Path) -> None:
    with DirHandles(root) as handles:
        link = handles.state("out")
        folder = handles.state("docs")
        pipe = handles.state("pipe")  # no writer: opening it to read would wait for one
    assert (link.kind, link.target, link.sha256, link.size) == ("symlink", "/etc", None, 0)
    assert (folder.kind, folder.sha256, folder.size) == ("dir", None, 0)
    assert (pipe.kind, pipe.mode, pipe.sha256) == ("fifo", 0o600, None)


def test_a_folders_names_are_read_only_when_asked(root: Path) -> None:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert read_state(fd, "docs").sha256 is None
        assert read_state(fd, "docs", listing=True).sha256 == sha(b"b.txt\0deep")
    finally:
        os.close(fd)


def test_a_folders_listing_is_the_hash_of_its_sorted_names(root: Path) -> None:
    with DirHandles(root) as handles:
        folder = handles.state("docs", listing=True)
        assert folder.sha256 == sha(b"b.txt\0deep")
        (root / "docs" / "c.txt").write_bytes(b"")
        assert handles.state("docs", listing=True).sha256 == sha(b"b.txt\0c.txt\0deep")
        # A name that is not UTF-8 is hashed as its bytes.
        (root / "docs" / os.fsdecode(b"\xe9")).mkdir()
        names = b"b.txt\0c.txt\0deep\0\xe9"
        assert listing_digest(handles.get(""), "docs") == sha(names)


def test_a_file_untouched_since_keeps_its_known_hash_and_a_touched_one_is_read_again(
    root: Path,
) -> None:
    with DirHandles(root) as handles:
        seen = handles.state("notes.md")
        # What the check trusts is the inode, size and times: a known hash is taken as is.
        known = FileState(**{**seen.to_dict(), "sha256": "k" * 64})
        assert handles.state("notes.md", known=known).sha256 == "k" * 64
        (root / "notes.md").write_bytes(b"final")
        assert handles.state("notes.md", known=known).sha256 == sha(b"final")


def test_nothing_at_a_path_is_absent(root: Path) -> None:
    with DirHandles(root) as handles:
        assert handles.state("missing") == ABSENT
        assert handles.state("missing/deeper/x") == ABSENT


def test_a_path_under_a_file_is_absent_and_one_under_a_link_is_blocked(root: Path) -> None:
    with DirHandles(root) as handles:
        assert handles.state("notes.md/x") == ABSENT
        # Under a link the path exists elsewhere: "other" matches no state taken before.
        assert handles.state("out/passwd") == BLOCKED == FileState(kind="other")
        assert not BLOCKED.matches(handles.state("notes.md"))
        with pytest.raises(PathBlocked, match=r"^\[Errno 20\] out: a symlink or file is in the"):
            handles.get("out")
        with pytest.raises(PathBlocked) as under_file:
            handles.get("notes.md/x")
        assert not under_file.value.link
        with pytest.raises(PathBlocked) as under_link:
            handles.get("out/x")
        assert under_link.value.link
        with pytest.raises(FileNotFoundError):
            handles.get("missing")


def test_the_root_must_be_a_folder_and_its_handle_is_not_inherited(root: Path) -> None:
    with pytest.raises(NotADirectoryError):
        DirHandles(root / "notes.md")
    with DirHandles(root) as handles:
        assert not os.get_inheritable(handles.get(""))
        assert not os.get_inheritable(handles.get("docs"))


def test_a_folder_lancelot_may_not_open_is_refused_as_such_not_as_blocked() -> None:
    def reach() -> str:
        with DirHandles(folder) as handles:
            try:
                handles.get("locked")
            except PathBlocked:
                return "blocked"
            except PermissionError:
                return "refused"
        return "opened"

    with shared_folder() as folder:
        (folder / "locked").mkdir(mode=0o000)
        os.chmod(folder / "locked", 0o000)
        assert as_nobody(reach) == "refused"


def test_the_root_is_its_own_handle_and_folders_are_reached_one_step_at_a_time(
    root: Path,
) -> None:
    with DirHandles(root) as handles:
        assert handles.get("") == handles.get(".")
        assert sorted(os.listdir(handles.get("."))) == ["docs", "notes.md", "out", "pipe"]
        assert os.listdir(handles.get("docs/deep")) == ["a.txt"]
        assert handles.state("docs/deep/a.txt").sha256 == sha(b"deep a")


def test_only_the_most_recent_folders_are_kept_open_and_closing_closes_all(root: Path) -> None:
    for n in range(6):
        (root / f"d{n}").mkdir()
    before = open_fds()
    handles = DirHandles(root, keep=2)
    for n in range(6):
        handles.get(f"d{n}")
    assert open_fds() == before + 1 + 2  # the root and the last two
    handles.get("d5")  # kept: no new handle
    assert open_fds() == before + 3
    handles.close()
    handles.close()  # a second close is harmless
    assert open_fds() == before


def test_a_folder_used_again_is_kept_over_older_ones(root: Path) -> None:
    for name in ("a", "b", "c"):
        (root / name).mkdir()
    with DirHandles(root, keep=2) as handles:
        first = handles.get("a")
        handles.get("b")
        assert handles.get("a") == first  # used again: now the most recent
        assert os.listdir(handles.get("c")) == []  # "b" is closed, not "a"
        (root / "a").rename(root / "a-old")
        (root / "a").mkdir()
        (root / "a" / "new").write_bytes(b"")
        assert os.listdir(handles.get("a")) == []  # still the folder it opened


def test_forgetting_a_folder_drops_it_and_what_is_under_it_and_nothing_else(root: Path) -> None:
    (root / "docs-2").mkdir()
    with DirHandles(root) as handles:
        handles.get("docs/deep")
        handles.get("docs-2")
        for name in ("docs", "docs-2"):
            (root / name).rename(root / f"{name}-old")
            (root / name / "deep").mkdir(parents=True)
            (root / name / "deep" / "new.txt").write_bytes(b"new")
        handles.forget("docs")
        assert os.listdir(handles.get("docs/deep")) == ["new.txt"]  # opened again
        assert os.listdir(handles.get("docs-2")) == []  # a sibling, still the old one
