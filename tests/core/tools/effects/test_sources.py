"""Where an apply or an undo reads new contents from: a dry run's upper layer (which may be
hard-linked into the workspace) or the undo store (copied, never linked); no symlink is
followed on the way."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from core.tools.effects.files import PathBlocked
from core.tools.effects.model import Effect, FileState
from core.tools.effects.objects import ObjectStore
from core.tools.effects.sources import ObjectSource, UpperSource


def effect(path: str, sha256: str | None = None) -> Effect:
    return Effect(path, FileState(), FileState("file", 0o644, 5, sha256))


def read(fd: int) -> bytes:
    try:
        return os.read(fd, 100)
    finally:
        os.close(fd)


def test_an_upper_layer_serves_its_files_by_relative_path(tmp_path: Path) -> None:
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "top.txt").write_text("top")
    (tmp_path / "deep" / "er" / "low.txt").write_text("low")
    with UpperSource(tmp_path) as source:
        assert read(source.open(effect("top.txt"))) == b"top"
        assert read(source.open(effect("deep/er/low.txt"))) == b"low"
    assert UpperSource.linkable


def test_an_upper_layer_follows_no_symlink(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("outside")
    (tmp_path / "link").symlink_to(tmp_path / "secret")
    with UpperSource(tmp_path) as source, pytest.raises(OSError, match="symbolic links"):
        source.open(effect("link"))


def test_a_directory_on_the_way_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    upper, outside = tmp_path / "upper", tmp_path / "outside"
    upper.mkdir()
    outside.mkdir()
    (outside / "f").write_text("outside")
    (upper / "d").symlink_to(outside)
    with UpperSource(upper) as source, pytest.raises(PathBlocked) as blocked:
        source.open(effect("d/f"))
    assert blocked.value.link


def test_leaving_an_upper_source_closes_its_directories(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_text("x")
    before = len(os.listdir("/proc/self/fd"))
    with UpperSource(tmp_path) as source:
        read(source.open(effect("d/f")))
    assert len(os.listdir("/proc/self/fd")) == before


def test_the_undo_store_serves_the_kept_content(tmp_path: Path) -> None:
    store = ObjectStore(tmp_path / "objects")
    sha = hashlib.sha256(b"kept").hexdigest()
    store.path(sha).parent.mkdir()
    store.path(sha).write_bytes(b"kept")
    assert read(ObjectSource(store).open(effect("a.txt", sha))) == b"kept"
    assert not ObjectSource.linkable  # an object may back several changes


def test_an_after_state_with_no_content_kept_is_named(tmp_path: Path) -> None:
    source = ObjectSource(ObjectStore(tmp_path / "objects"))
    with pytest.raises(FileNotFoundError, match=r"^notes/a\.txt: no content was kept$"):
        source.open(effect("notes/a.txt"))
