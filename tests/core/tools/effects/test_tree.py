"""Removing a dry run's directories whatever modes its command left on them: unreadable or
unwritable directories are opened up first; a symlink is removed, never followed; what
still cannot go is logged and left, without an error."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from core.tools.effects.tree import remove_tree
from tests.core.tools.effects.support import NOBODY, as_nobody, shared_folder


def test_a_missing_path_is_nothing_to_do(tmp_path: Path) -> None:
    remove_tree(tmp_path / "gone")
    assert list(tmp_path.iterdir()) == []


def test_a_symlink_is_removed_and_its_target_kept(tmp_path: Path) -> None:
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "keep").write_text("k")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    remove_tree(tmp_path / "link")
    remove_tree(tmp_path / "dangling")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target"]
    assert (tmp_path / "target" / "keep").read_text() == "k"


def lock_up(run: Path) -> None:
    """What a command can leave: a folder none may read, one none may write, deep ones."""
    (run / "upper" / "sealed" / "deep").mkdir(parents=True)
    (run / "upper" / "sealed" / "deep" / "f").write_text("x")
    (run / "upper" / "readonly").mkdir()
    (run / "upper" / "readonly" / "g").write_text("y")
    os.chmod(run / "upper" / "sealed" / "deep", 0)
    os.chmod(run / "upper" / "sealed", 0)
    os.chmod(run / "upper" / "readonly", 0o500)


def test_folders_a_command_locked_are_opened_up_and_removed(tmp_path: Path) -> None:
    lock_up(tmp_path / "run")
    remove_tree(tmp_path / "run")
    assert not (tmp_path / "run").exists()


def remove_locked(folder: Path) -> str:
    """As a user that is not root, whom modes bind: lock a tree up in a folder of its own
    (as LANCELOT_HOME/dryruns is), then remove it."""
    home = folder / "dryruns"
    home.mkdir()
    lock_up(home / "run")
    remove_tree(home / "run")
    return "gone" if not os.path.lexists(home / "run") else "left"


def test_folders_locked_against_their_own_owner_are_opened_up_and_removed() -> None:
    with shared_folder() as folder:
        assert as_nobody(lambda: remove_locked(folder)) == "gone"


def remove_anothers(folder: Path) -> str:
    """As a user that is not root: remove a tree with a file in root's own folder."""
    messages: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: messages.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("core.tools.effects.tree")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    remove_tree(folder / "run")
    left = "left" if (folder / "run" / "roots" / "f").exists() else "gone"
    return f"{left}: " + " | ".join(messages)


def test_what_cannot_go_is_logged_and_left() -> None:
    with shared_folder() as folder:
        (folder / "run" / "roots").mkdir(parents=True)
        os.chmod(folder / "run", 0o777)  # noqa: S103 (the other user may open it up)
        (folder / "run" / "roots" / "f").write_text("root's")
        os.chmod(folder / "run" / "roots", 0o755)  # noqa: S103 (root's: the other user cannot change it)
        said = as_nobody(lambda: remove_anothers(folder))
    assert said.startswith("left: dry run leftovers not removed: "), said
    assert "/run/roots/f: [Errno 1] Operation not permitted" in said


def test_a_folder_holding_one_of_roots_is_tried_once_and_left() -> None:
    # overlayfs's own work folder: the user's, holding a folder of root's it cannot open.
    with shared_folder() as folder:
        work = folder / "run" / "work"
        (work / "work").mkdir(parents=True)
        (work / "work" / "x").write_text("root's")
        os.chmod(work / "work", 0)
        for path in (folder / "run", work):
            os.chown(path, NOBODY, NOBODY)
        said = as_nobody(lambda: remove_anothers(folder))
    assert said.startswith("left: ") or said.startswith("gone: "), said
    assert "RecursionError" not in said
    assert re.search(r"(^|\| )dry run leftovers not removed: \S+/run/work: \[Errno 39\] ", said), (
        said
    )
