"""Crash-safe replacement of a soul file: the old text or the new one, never a temporary."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from soul.atomic import write_atomic
from tests.fakes.descriptors import leaves_no_file_open


def test_a_file_is_replaced_whole_and_its_folder_made(tmp_path: Path) -> None:
    path = tmp_path / "state" / "soul" / "ACTIVE"
    write_atomic(path, "1\n")
    write_atomic(path, "2\n")
    assert path.read_text(encoding="utf-8") == "2\n"
    assert os.listdir(path.parent) == ["ACTIVE"]


def test_a_text_that_cannot_be_written_leaves_the_old_file_and_no_temporary(
    tmp_path: Path,
) -> None:
    path = tmp_path / "soul_v2.yaml"
    write_atomic(path, "version: 2\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(path, "version: 2\nname: \udcff\n")  # a lone surrogate: not UTF-8
    assert path.read_text(encoding="utf-8") == "version: 2\n"
    assert os.listdir(tmp_path) == ["soul_v2.yaml"]


def test_the_text_is_written_as_utf8(tmp_path: Path) -> None:
    path = tmp_path / "soul_v2.yaml"
    write_atomic(path, "name: Lancelot du Lac — ✓\n")
    assert path.read_bytes() == "name: Lancelot du Lac — ✓\n".encode()


def test_writing_holds_no_file_open_afterwards(tmp_path: Path) -> None:
    path = tmp_path / "ACTIVE"
    write_atomic(path, "1\n")
    with leaves_no_file_open():
        for version in range(2, 12):
            write_atomic(path, f"{version}\n")
