"""What an effect is: a path's state before and after, what that change is called, what an
approval binds to, and the stored form that a kept dry run is read back from."""

from __future__ import annotations

import json

import pytest

from core.tools.effects.model import (
    ABSENT,
    Effect,
    FileState,
    GitChanges,
    RefChange,
)

SHA_A, SHA_B = "a" * 64, "b" * 64


def text_file(
    sha: str = SHA_A,
    mode: int = 0o644,
    size: int = 5,
    *,
    mtime_ns: int = 0,
    ctime_ns: int = 0,
    ino: int = 0,
    uid: int = -1,
    gid: int = -1,
) -> FileState:
    """A regular file as a scan reads it."""
    return FileState(
        "file", mode, size, sha, mtime_ns=mtime_ns, ctime_ns=ctime_ns, ino=ino, uid=uid, gid=gid
    )


DIR = FileState("dir", 0o755, sha256=SHA_A)
LINK = FileState("symlink", 0o777, target="notes.md")


def test_nothing_at_a_path_is_absent_and_stored_with_an_unknown_owner() -> None:
    assert not ABSENT.exists
    assert FileState("fifo").exists
    assert ABSENT.to_dict() == {
        "kind": "absent", "mode": 0, "size": 0, "sha256": None, "target": None,
        "mtime_ns": 0, "ctime_ns": 0, "ino": 0, "uid": -1, "gid": -1,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("before", "after", "kind", "destroys"),
    [
        (ABSENT, text_file(), "created", False),
        (text_file(), ABSENT, "deleted", True),
        (text_file(), text_file(SHA_B), "modified", True),
        (LINK, FileState("symlink", 0o777, target="elsewhere"), "modified", True),
        (text_file(), DIR, "replaced", True),
        (DIR, LINK, "replaced", True),
        (text_file(), text_file(mode=0o755), "mode_changed", False),
        # A folder's own effect is its mode: what it holds has effects of its own.
        (DIR, FileState("dir", 0o700, sha256=SHA_B), "mode_changed", False),
        # A link that still points at the same place is not modified, whatever its inode.
        (LINK, FileState("symlink", 0o777, target="notes.md", ino=9), "mode_changed", False),
    ],
)
def test_each_change_has_its_word_and_only_a_loss_needs_a_backup(
    before: FileState, after: FileState, kind: str, destroys: bool
) -> None:
    effect = Effect("notes.md", before, after)
    assert (effect.kind, effect.destroys) == (kind, destroys)


def test_the_inverse_takes_the_path_back() -> None:
    deleted = Effect("gone.txt", text_file(), ABSENT)
    assert deleted.inverse() == Effect("gone.txt", ABSENT, text_file())
    assert deleted.inverse().kind == "created"


@pytest.mark.parametrize(
    ("path", "in_git"),
    [
        (".git", True),
        (".git/index", True),
        ("site/.git/refs/heads/main", True),
        (".gitignore", False),
        ("notes.git/HEAD", False),
        ("docs/.github/workflows/ci.yml", False),
    ],
)
def test_only_a_repositorys_own_folder_is_in_git(path: str, in_git: bool) -> None:
    assert Effect(path, ABSENT, text_file()).in_git is in_git


def test_an_untouched_file_is_recognised_by_its_inode_size_and_times() -> None:
    seen = text_file(mtime_ns=10, ctime_ns=20, ino=7)
    assert seen.unchanged_stat(text_file(SHA_B, mtime_ns=10, ctime_ns=20, ino=7))
    assert not seen.unchanged_stat(text_file(mtime_ns=11, ctime_ns=20, ino=7))
    assert not seen.unchanged_stat(text_file(mtime_ns=10, ctime_ns=21, ino=7))
    assert not seen.unchanged_stat(text_file(mtime_ns=10, ctime_ns=20, ino=8))
    assert not seen.unchanged_stat(text_file(size=6, mtime_ns=10, ctime_ns=20, ino=7))
    # No inode known (a state built, not read): never taken as untouched.
    assert not text_file().unchanged_stat(text_file())
    # Only files are hashed: a folder or a link is never "untouched" this way.
    folder = FileState("dir", 0o755, mtime_ns=10, ctime_ns=20, ino=7)
    assert not folder.unchanged_stat(folder)
    assert not seen.unchanged_stat(FileState("fifo", 0o644, 5, mtime_ns=10, ctime_ns=20, ino=7))


def test_a_file_matches_by_size_mode_and_content_not_by_its_times() -> None:
    stored = text_file(mtime_ns=1, ino=3, uid=1000)
    assert stored.matches(text_file(mtime_ns=2, ino=4, uid=0))
    assert not stored.matches(text_file(SHA_B))
    assert not stored.matches(text_file(size=6))
    assert not stored.matches(text_file(mode=0o600))
    assert not stored.matches(DIR)


def test_a_folder_matches_by_mode_and_by_its_names_when_they_were_read() -> None:
    assert DIR.matches(FileState("dir", 0o755, sha256=SHA_A))
    assert not DIR.matches(FileState("dir", 0o755, sha256=SHA_B))  # a name added or gone
    assert not DIR.matches(FileState("dir", 0o700, sha256=SHA_A))
    unread = FileState("dir", 0o755)
    assert unread.matches(FileState("dir", 0o755, sha256=SHA_B))
    assert not unread.matches(FileState("dir", 0o700))
    assert not DIR.matches(text_file())


def test_a_link_matches_by_where_it_points() -> None:
    assert LINK.matches(FileState("symlink", 0o755, target="notes.md"))
    assert not LINK.matches(FileState("symlink", 0o777, target="/etc/passwd"))
    assert not LINK.matches(text_file())


def test_other_kinds_match_by_mode_and_absent_matches_absent() -> None:
    fifo = FileState("fifo", 0o644)
    assert fifo.matches(FileState("fifo", 0o644, ino=5))
    assert not fifo.matches(FileState("fifo", 0o600))
    assert not fifo.matches(FileState("other", 0o644))
    assert ABSENT.matches(FileState())
    assert not ABSENT.matches(fifo)


def test_an_approval_binds_to_content_not_to_times_owners_or_a_folders_names() -> None:
    seen = text_file(mtime_ns=1, ctime_ns=2, ino=3, uid=4, gid=5)
    assert seen.identity() == {
        "kind": "file", "mode": 0o644, "size": 5, "sha256": SHA_A, "target": None,
    }  # fmt: skip
    assert DIR.identity() == {
        "kind": "dir", "mode": 0o755, "size": 0, "sha256": None, "target": None,
    }  # fmt: skip
    assert LINK.identity()["target"] == "notes.md"
    assert Effect("a", seen, DIR).identity() == {
        "path": "a", "before": seen.identity(), "after": DIR.identity(),
    }  # fmt: skip


@pytest.mark.parametrize("kind", ["absent", "file", "dir", "symlink", "fifo", "other"])
def test_every_state_survives_the_stored_form(kind: str) -> None:
    state = FileState(
        kind,  # type: ignore[arg-type]
        0o750, 12, SHA_B, "there", mtime_ns=1, ctime_ns=2, ino=3, uid=1000, gid=1001,
    )  # fmt: skip
    stored = json.loads(json.dumps(state.to_dict()))
    assert stored == {
        "kind": kind, "mode": 0o750, "size": 12, "sha256": SHA_B, "target": "there",
        "mtime_ns": 1, "ctime_ns": 2, "ino": 3, "uid": 1000, "gid": 1001,
    }  # fmt: skip
    assert FileState.from_dict(stored) == state
    effect = Effect("a/b", state, ABSENT)
    assert effect.to_dict() == {"path": "a/b", "before": stored, "after": ABSENT.to_dict()}
    assert Effect.from_dict(json.loads(json.dumps(effect.to_dict()))) == effect


def test_a_state_stored_with_fewer_fields_reads_with_their_defaults() -> None:
    assert FileState.from_dict({"kind": "absent"}) == ABSENT
    older = FileState.from_dict({"kind": "file", "mode": 420, "size": 3, "sha256": SHA_A})
    assert older == FileState("file", 420, 3, SHA_A)
    assert (older.uid, older.gid, older.ino, older.mtime_ns) == (-1, -1, 0, 0)


@pytest.mark.parametrize("kind", ["socket", None, "FILE"])
def test_a_stored_state_of_no_known_kind_is_refused(kind: str | None) -> None:
    with pytest.raises(ValueError, match=rf"^unknown file kind {kind!r}$"):
        FileState.from_dict({"kind": kind, "mode": 420})


def test_a_ref_is_created_moved_or_deleted() -> None:
    assert RefChange("refs/tags/v1", None, "1" * 40).kind == "created"
    assert RefChange("refs/heads/old", "1" * 40, None).kind == "deleted"
    assert RefChange("HEAD", "ref: refs/heads/main", "ref: refs/heads/topic").kind == "moved"


def test_a_repositorys_changes_survive_the_stored_form() -> None:
    changes = GitChanges(
        repo="site",
        refs=(RefChange("refs/heads/old", "1" * 40, None), RefChange("HEAD", None, "2" * 40)),
        index_changed=True,
        objects_added=3,
        objects_removed=4,
        config_changed=("site/.git/config",),
        other_files=5,
        lost=("refs/heads/old",),
        broken=("refs/heads/bad",),
    )
    stored = json.loads(json.dumps(changes.to_dict()))
    assert stored == {
        "repo": "site",
        "refs": [
            {"name": "refs/heads/old", "before": "1" * 40, "after": None},
            {"name": "HEAD", "before": None, "after": "2" * 40},
        ],
        "index_changed": True,
        "objects_added": 3,
        "objects_removed": 4,
        "config_changed": ["site/.git/config"],
        "other_files": 5,
        "lost": ["refs/heads/old"],
        "broken": ["refs/heads/bad"],
    }
    assert GitChanges.from_dict(stored) == changes


def test_a_repositorys_changes_stored_with_fewer_fields_change_nothing_else() -> None:
    bare = GitChanges.from_dict({"repo": "", "refs": [{"name": "HEAD", "after": "1" * 40}]})
    assert bare == GitChanges("", (RefChange("HEAD", None, "1" * 40),))
    assert bare.to_dict() == {
        "repo": "", "refs": [{"name": "HEAD", "before": None, "after": "1" * 40}],
        "index_changed": False, "objects_added": 0, "objects_removed": 0,
        "config_changed": [], "other_files": 0, "lost": [], "broken": [],
    }  # fmt: skip
