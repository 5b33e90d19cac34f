"""An effect set in the owner's words, on effects made by hand (no engine needed): sizes in
every unit, directories that stand for what they held, links, replacements, and what git
would tell of a repository."""

from __future__ import annotations

import pytest

from core.tools.effects import Effect, FileState, GitChanges, RefChange
from core.tools.effects.model import ABSENT
from core.tools.effects.summary import describe, size_text

DIR = FileState("dir", 0o755)


def file(size: int = 1, sha: str = "f" * 64) -> FileState:
    return FileState("file", 0o644, size, sha)


def link(target: str) -> FileState:
    return FileState("symlink", 0o777, target=target)


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (1023, "1023 B"),
        (1024, "1.0 KB"),
        (10 << 30, "10.0 GB"),
        (10 << 40, "10.0 TB"),
        (2048 << 40, "2048.0 TB"),  # no unit past TB
    ],
)
def test_sizes_at_each_units_edge(size: int, text: str) -> None:
    assert size_text(size) == text


def test_twenty_names_are_all_listed_and_the_twenty_first_is_counted() -> None:
    twenty = [Effect(f"f{n:02}", file(), ABSENT) for n in range(20)]
    names = ", ".join(f"f{n:02}" for n in range(20))
    assert describe(twenty, []) == f"deletes 20 files: {names}"
    more = [*twenty, Effect("f20", file(), ABSENT)]
    assert describe(more, []) == f"deletes 21 files: {names} and 1 more"


def test_a_deleted_folder_stands_for_the_files_it_held_and_not_its_folders() -> None:
    effects = [
        Effect("b", DIR, ABSENT),
        Effect("b/sub", DIR, ABSENT),
        Effect("b/sub/x", file(), ABSENT),
        Effect("empty", DIR, ABSENT),
        Effect("kept/gone", DIR, ABSENT),  # kept/ itself stays
        Effect("kept/gone/y", file(), ABSENT),
    ]
    assert describe(effects, []) == "deletes 3 folders: b/ (1 file), empty/, kept/gone/ (1 file)"


def test_links_made_and_moved_and_things_replaced_are_named_with_what_they_become() -> None:
    effects = [
        Effect("new", ABSENT, link("/etc/passwd")),
        Effect("old", link("a"), link("b")),
        Effect("swap", file(9), link("/etc/shadow")),
    ]
    assert describe(effects, []) == (
        "replaces swap (file of 9 B → symlink to /etc/shadow); makes symlinks new → /etc/passwd,"
        " old → b"
    )
    assert describe([Effect("old", link("a"), link("b"))], []) == "makes symlink old → b"


def test_refs_of_every_kind_are_named_as_git_names_them() -> None:
    refs = (
        RefChange("refs/remotes/origin/main", "1" * 40, "2" * 40),
        RefChange("refs/heads/main", "3" * 40, "4" * 40),
        RefChange("refs/notes/commits", None, None),
    )
    changes = GitChanges("w", refs, broken=("refs/heads/main",))
    assert describe([], [changes]) == (
        "moves git remote branch origin/main (1111111 → 2222222) in w/; points git branch main"
        " at 4444444, not a commit git can find in w/; creates git ref notes/commits (at"
        " nothing) in w/"
    )


def test_past_twenty_ref_changes_the_rest_are_counted() -> None:
    refs = tuple(RefChange(f"refs/tags/t{n:02}", None, f"{n:02}" * 20) for n in range(21))
    said = describe([], [GitChanges("", refs[:20])])
    assert said.endswith("creates git tag t19 (at 1919191)")
    assert said.count("creates git tag") == 20
    said = describe([], [GitChanges("", refs)])
    assert said.endswith("creates git tag t19 (at 1919191); and 1 more git ref changes")


def test_objects_removed_and_what_git_obeys_are_told() -> None:
    changes = GitChanges("w", objects_removed=2, config_changed=("config", "hooks/pre-commit"))
    assert describe([], [changes]) == (
        "removes 2 git objects in w/; changes what git runs or obeys: config, hooks/pre-commit"
    )
