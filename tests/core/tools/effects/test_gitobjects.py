"""gitobjects on its own, over real repositories on the host (no sandbox): which object
stores it reads, what it refuses, and what it answers when git itself fails or is missing."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from core.tools.effects import gitobjects
from core.tools.effects.gitobjects import ObjectReader, Unreadable, object_store
from tests.core.tools.effects.support import commit, git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository at tmp_path/work/repo with two commits, its objects packed and loose."""
    path = tmp_path / "work" / "repo"
    path.mkdir(parents=True)
    git(path, "init", "-q")
    commit(path, "one")
    git(path, "gc", "-q")
    commit(path, "two")
    return path


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder temporary directories are made in, for the duration of the test."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def objects_of(repo: Path) -> Path:
    return repo / ".git" / "objects"


def fake_git(folder: Path, script: str) -> Path:
    """An executable `git` in `folder` that runs `script` (sh); the folder, for PATH."""
    folder.mkdir(exist_ok=True)
    program = folder / "git"
    program.write_text(f"#!/bin/sh\n{script}\n")
    program.chmod(0o755)
    return folder


def test_a_repositorys_own_objects_are_its_store(repo: Path) -> None:
    root = repo.parents[1]
    assert object_store(root, "work/repo/.git") == objects_of(repo)


@pytest.mark.parametrize("gitdir", ["work/none/.git", "work/repo/.git/modules/x"])
def test_a_repository_without_objects_has_no_store(repo: Path, gitdir: str) -> None:
    assert object_store(repo.parents[1], gitdir) is None


def test_a_git_file_pointing_elsewhere_is_no_store(tmp_path: Path) -> None:
    """A worktree's or submodule's .git is a file naming another directory: not followed."""
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("gitdir: /somewhere/else\n")
    assert object_store(tmp_path, "wt/.git") is None


def link(path: Path, target: Path) -> None:
    """Replace `path` (a folder or a file) by a symlink to `target`, which gets its content."""
    path.rename(target)
    path.symlink_to(target)


@pytest.mark.parametrize("on_the_way", ["work", ".git", ".git/objects"])
def test_a_symlink_on_the_way_to_the_objects_is_unreadable(
    repo: Path, tmp_path: Path, on_the_way: str
) -> None:
    """git would follow it out of the workspace, whichever folder of the path it is."""
    root = repo.parents[1]
    path = root / on_the_way if on_the_way == "work" else repo / on_the_way
    link(path, tmp_path / "elsewhere")
    with pytest.raises(Unreadable, match="is a symlink"):
        object_store(root, "work/repo/.git")


def loose_object(repo: Path) -> Path:
    """One loose object file of the repository."""
    return next(p for p in objects_of(repo).glob("[0-9a-f][0-9a-f]/*"))


@pytest.mark.parametrize("inside", ["fan-out folder", "loose object", "pack", "pack folder"])
def test_a_symlink_among_the_objects_is_unreadable(repo: Path, tmp_path: Path, inside: str) -> None:
    obj = loose_object(repo)
    pack = next((objects_of(repo) / "pack").glob("*.pack"))
    path = {
        "fan-out folder": obj.parent,
        "loose object": obj,
        "pack": pack,
        "pack folder": pack.parent,
    }[inside]
    link(path, tmp_path / "elsewhere")
    with pytest.raises(Unreadable, match="is a symlink"):
        object_store(repo.parents[1], "work/repo/.git")


@pytest.mark.parametrize("name", ["alternates", "http-alternates"])
def test_an_alternates_file_is_unreadable(repo: Path, tmp_path: Path, name: str) -> None:
    (objects_of(repo) / "info" / name).write_text(f"{tmp_path}\n")
    with pytest.raises(Unreadable, match="points git at other objects"):
        object_store(repo.parents[1], "work/repo/.git")


def test_what_git_itself_leaves_among_the_objects_is_read(repo: Path) -> None:
    """info/packs (update-server-info) is a file in info/ but no alternates; a stray file
    beside the fan-out folders is no folder to look into."""
    git(repo, "update-server-info")
    assert (objects_of(repo) / "info" / "packs").is_file()
    (objects_of(repo) / "stray").write_text("x")
    assert object_store(repo.parents[1], "work/repo/.git") == objects_of(repo)


def test_a_stray_file_listed_first_does_not_end_the_check(repo: Path, tmp_path: Path) -> None:
    """Whatever order the folder lists its entries in, a file before a fan-out folder
    leaves that folder checked."""
    objects = objects_of(repo)
    link(loose_object(repo), tmp_path / "elsewhere")
    folders = {p.name for p in objects.iterdir() if p.is_dir()}
    for number in range(200):
        (objects / f"stray{number}").write_text("x")
        order = [entry.name for entry in os.scandir(objects)]
        first_folder = min(order.index(name) for name in folders)
        if any(name.startswith("stray") for name in order[:first_folder]):
            break
    else:
        pytest.fail("no order with a file first")
    with pytest.raises(Unreadable, match="is a symlink"):
        object_store(repo.parents[1], "work/repo/.git")


def test_the_files_checked_are_bounded(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At the bound the store is read; one file fewer allowed and it is not."""
    objects = objects_of(repo)
    files = sum(len(os.listdir(p)) for p in objects.iterdir() if p.is_dir())
    monkeypatch.setattr(gitobjects, "MAX_ENTRIES", files)
    assert object_store(repo.parents[1], "work/repo/.git") == objects
    monkeypatch.setattr(gitobjects, "MAX_ENTRIES", files - 1)
    with pytest.raises(Unreadable, match="too many files"):
        object_store(repo.parents[1], "work/repo/.git")


def split_store(repo: Path, tmp_path: Path) -> tuple[Path, str, str]:
    """A second store holding the newest commit's loose objects, moved out of the
    repository; (that store, the newest commit, its parent)."""
    newest, parent = git(repo, "rev-parse", "HEAD"), git(repo, "rev-parse", "HEAD~1")
    upper = tmp_path / "upper-objects"
    listed = git(repo, "rev-list", "--objects", "--no-walk", newest, f"^{parent}")
    for oid in (line.split()[0] for line in listed.splitlines()):
        loose = objects_of(repo) / oid[:2] / oid[2:]
        if loose.exists():
            (upper / oid[:2]).mkdir(parents=True, exist_ok=True)
            loose.rename(upper / oid[:2] / oid[2:])
    return upper, newest, parent


def test_objects_are_read_from_every_store(repo: Path, tmp_path: Path) -> None:
    """A commit only the first store holds, on a parent only the second holds: both are
    commits, and the walk between them crosses the stores."""
    upper, newest, parent = split_store(repo, tmp_path)
    with ObjectReader([upper, objects_of(repo)]) as objects:
        assert objects.commits([newest, parent]) == {newest: newest, parent: parent}
        assert not objects.unreachable(parent, [newest])
        assert objects.unreachable(newest, [parent])
    with ObjectReader([objects_of(repo)]) as objects:
        assert objects.commits([newest]) == {newest: None}


def test_only_object_ids_are_asked_and_a_tag_is_peeled_when_asked(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "-a", "-m", "t", "v1")
    tag = git(repo, "rev-parse", "v1")
    names = [head, tag, f"{tag}^{{commit}}", "HEAD", "--all", "0" * 40]
    with ObjectReader([objects_of(repo)]) as objects:
        found = objects.commits(names)
    assert found == {
        head: head,
        tag: None,
        f"{tag}^{{commit}}": head,
        "HEAD": None,
        "--all": None,
        "0" * 40: None,
    }


def test_a_commit_git_cannot_walk_counts_as_unreachable(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    with ObjectReader([objects_of(repo)]) as objects:
        assert objects.unreachable("1" * 40, [head])
        assert not objects.unreachable(head, [head])


@pytest.mark.parametrize("name", ["/tmp/a\n/etc", '"quoted\\057etc'])
def test_a_store_path_git_would_misread_is_refused_and_nothing_left(
    scratch: Path, name: str
) -> None:
    """A newline would split the alternates line; a leading quote makes git unquote it."""
    with pytest.raises(Unreadable, match="cannot be given to git"), ObjectReader([Path(name)]):
        pass
    assert list(scratch.iterdir()) == []


def test_the_reader_removes_its_git_directory(repo: Path, scratch: Path) -> None:
    with ObjectReader([objects_of(repo)]) as objects:
        assert len(list(scratch.iterdir())) == 1
    assert list(scratch.iterdir()) == []
    with pytest.raises(RuntimeError, match="outside its with block"):
        objects.commits([git(repo, "rev-parse", "HEAD")])


def test_without_git_on_the_path_nothing_is_readable(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with ObjectReader([objects_of(repo)]) as objects:
        with pytest.raises(Unreadable, match="not installed"):
            objects.commits([head])
        assert objects.unreachable(head, [])


def test_with_no_path_set_git_is_looked_for_where_it_is_installed(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    monkeypatch.delenv("PATH")
    with ObjectReader([objects_of(repo)]) as objects:
        assert objects.commits([head]) == {head: head}


def test_a_git_that_answers_for_fewer_objects_than_asked_is_not_believed(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The git on PATH is the one asked; its short answer is refused, not half read."""
    head = git(repo, "rev-parse", "HEAD")
    parent = git(repo, "rev-parse", "HEAD~1")
    folder = fake_git(tmp_path / "bin", f"/bin/cat >/dev/null; echo '{head} commit'")
    monkeypatch.setenv("PATH", str(folder))
    with ObjectReader([objects_of(repo)]) as objects:
        assert objects.commits([head]) == {head: head}
        with pytest.raises(Unreadable, match="did not answer for every object"):
            objects.commits([head, parent])


@pytest.mark.parametrize(
    ("script", "words"),
    [
        ("echo 'fatal: broken' >&2; exit 128", "git failed: fatal: broken"),
        ("exec /bin/sleep 5", "could not be asked"),
    ],
)
def test_a_git_that_fails_or_hangs_is_unreadable(
    repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    script: str,
    words: str,
) -> None:
    assert 0 < gitobjects.TIMEOUT <= 60  # a dry run waits on a hung git a minute at most
    monkeypatch.setattr(gitobjects, "TIMEOUT", 0.5)
    monkeypatch.setenv("PATH", str(fake_git(tmp_path / "bin", script)))
    head = "a" * 40
    with ObjectReader([objects_of(repo)]) as objects:
        with pytest.raises(Unreadable, match=words):
            objects.commits([head])
        assert objects.unreachable(head, [])


def test_a_git_that_cannot_be_started_is_unreadable(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An executable file that is no program (exec fails) is told, not raised as OSError."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "git").write_bytes(b"\x00\x01\x02 not a program")
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    with (
        ObjectReader([objects_of(repo)]) as objects,
        pytest.raises(Unreadable, match="could not be asked"),
    ):
        objects.commits(["a" * 40])
