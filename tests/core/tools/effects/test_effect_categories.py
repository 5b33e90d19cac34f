"""What the Soul's effect rules see of an effect set (its categories) and what the card says
git loses, on effects made by hand: every case exact, no sandbox needed."""

from __future__ import annotations

import hashlib

from core.tools.effects import Effect, EffectSet, FileState, GitChanges, RefChange
from core.tools.effects.model import ABSENT

DIR = FileState("dir", 0o755)
LINK = FileState("symlink", 0o777, target="notes.md")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def blob(text: str, mode: int = 0o644) -> FileState:
    """A file holding `text`."""
    return FileState("file", mode, len(text), sha(text))


def test_each_change_outside_git_lands_in_its_category() -> None:
    found = EffectSet(
        (
            Effect(".git/index", blob("staged"), blob("staged again")),
            Effect("gone.txt", blob("old words"), ABSENT),
            Effect("link", ABSENT, LINK),
            Effect("new.txt", ABSENT, blob("new words")),
            Effect("notes.md", blob("draft"), blob("final")),
            Effect("run.sh", blob("echo"), blob("echo", 0o755)),
            Effect("swap", blob("was a file"), DIR),
        )
    ).categories()
    assert found == {
        "creates": ("link", "new.txt"),
        "overwrites": ("notes.md", "swap"),
        "deletes": ("gone.txt",),
        "mode_changes": ("run.sh",),
        "symlinks": ("link",),
    }


def test_a_file_renamed_is_moved_not_deleted() -> None:
    """mv a.txt b.txt: the deleted name's exact content is created under the other."""
    found = EffectSet(
        (Effect("a.txt", blob("kept"), ABSENT), Effect("b.txt", ABSENT, blob("kept")))
    ).categories()
    assert found == {"creates": ("b.txt",), "moves": ("a.txt",)}


def test_each_new_copy_saves_one_deleted_file_only() -> None:
    """Three files alike deleted and two copies made: the third's loss is a delete."""
    found = EffectSet(
        (
            Effect("copy1", blob("same"), ABSENT),
            Effect("copy2", blob("same"), ABSENT),
            Effect("copy3", blob("same"), ABSENT),
            Effect("gone", blob("unlike any other"), ABSENT),
            Effect("kept1", ABSENT, blob("same")),
            Effect("kept2", ABSENT, blob("same")),
        )
    ).categories()
    assert found == {
        "creates": ("kept1", "kept2"),
        "moves": ("copy1", "copy2"),
        "deletes": ("copy3", "gone"),
    }


def test_a_file_moved_over_another_deletes_and_overwrites() -> None:
    """mv a.txt b.txt over an existing b.txt: b.txt's old content is lost, and a.txt's name
    is gone with no new file made for it."""
    found = EffectSet(
        (Effect("a.txt", blob("mine"), ABSENT), Effect("b.txt", blob("theirs"), blob("mine")))
    ).categories()
    assert found == {"overwrites": ("b.txt",), "deletes": ("a.txt",)}


def test_a_folder_renamed_is_moved_with_all_it_held() -> None:
    """mv d e, with a folder inside d: every path under d lives on under e."""
    found = EffectSet(
        (
            Effect("d", DIR, ABSENT),
            Effect("d/sub", DIR, ABSENT),
            Effect("d/sub/y", blob("why"), ABSENT),
            Effect("d/x", blob("ex"), ABSENT),
            Effect("e", ABSENT, DIR),
            Effect("e/sub", ABSENT, DIR),
            Effect("e/sub/y", ABSENT, blob("why")),
            Effect("e/x", ABSENT, blob("ex")),
        )
    ).categories()
    assert found == {
        "creates": ("e", "e/sub", "e/sub/y", "e/x"),
        "moves": ("d", "d/sub", "d/sub/y", "d/x"),
    }


def test_a_folder_is_deleted_when_anything_in_it_is_lost_or_it_held_nothing() -> None:
    found = EffectSet(
        (
            Effect("empty", DIR, ABSENT),
            Effect("half", DIR, ABSENT),
            Effect("half/a", blob("saved"), ABSENT),
            Effect("half/b", blob("lost"), ABSENT),
            Effect("saved", ABSENT, blob("saved")),
        )
    ).categories()
    assert found == {
        "creates": ("saved",),
        "moves": ("half/a",),
        "deletes": ("empty", "half", "half/b"),
    }


def test_refs_are_named_with_their_repository_and_what_they_lose() -> None:
    changes = GitChanges(
        "vendor/lib",
        (
            RefChange("refs/heads/bad", "1" * 40, "2" * 40),
            RefChange("refs/heads/main", "3" * 40, "4" * 40),
        ),
        index_changed=True,
        config_changed=("vendor/lib/.git/config",),
        lost=("refs/heads/main",),
        broken=("refs/heads/bad",),
    )
    assert EffectSet((), (changes,)).categories() == {
        "git_refs_moved": ("vendor/lib:refs/heads/bad", "vendor/lib:refs/heads/main"),
        "git_history_lost": ("vendor/lib:refs/heads/main",),
        "git_refs_broken": ("vendor/lib:refs/heads/bad",),
        "git_index": ("vendor/lib",),
        "git_config": ("vendor/lib/.git/config",),
    }


def test_git_objects_damaged_are_told_apart_from_those_git_removes() -> None:
    """A loose object removed is told by the git summary; one rewritten, or a pack's index
    removed, damages what git reads."""
    loose = ".git/objects/ab/" + "c" * 38
    removed = ".git/objects/de/" + "f" * 38
    index = ".git/objects/pack/pack-" + "9" * 40 + ".idx"
    effects = EffectSet(
        (
            Effect(loose, blob("object", 0o444), blob("garbage", 0o444)),
            Effect(removed, blob("other", 0o444), ABSENT),
            Effect(index, blob("index", 0o444), ABSENT),
        ),
        (GitChanges("", objects_removed=1),),
    )
    assert effects.summary == "removes 1 git objects; damages 2 git object files"
    assert effects.categories() == {"overwrites": (loose,), "deletes": (removed, index)}


def test_one_damaged_object_is_one_file() -> None:
    loose = ".git/objects/ab/" + "c" * 38
    effects = EffectSet((Effect(loose, blob("object", 0o444), blob("garbage", 0o444)),))
    assert effects.summary == "damages 1 git object file"


def test_reflogs_cut_short_are_named_in_their_repository() -> None:
    effects = EffectSet(
        (
            Effect("a/README", blob("read me"), blob("read me now")),
            Effect("a/b/.git/logs/HEAD", blob("two entries"), blob("one")),
            Effect("a/b/.git/logs/refs/heads/main", blob("entries"), ABSENT),
        )
    )
    assert effects.summary == (
        "overwrites a/README (7 B → 11 B); erases reflog entries of HEAD in a/b/,"
        " refs/heads/main in a/b/"
    )
    assert effects.categories() == {
        "overwrites": ("a/README", "a/b/.git/logs/HEAD"),
        "deletes": ("a/b/.git/logs/refs/heads/main",),
    }


def test_a_reflog_folder_removed_names_the_reflogs_it_held() -> None:
    """rm -r .git/logs/refs/heads/feature: the folder is no reflog, the file in it is."""
    effects = EffectSet(
        (
            Effect(".git/logs/refs/heads/feature", DIR, ABSENT),
            Effect(".git/logs/refs/heads/feature/x", blob("entries"), ABSENT),
        )
    )
    assert effects.summary == "erases reflog entries of refs/heads/feature/x"
    assert effects.categories() == {"deletes": (".git/logs/refs/heads/feature/x",)}


def test_a_reflog_rewritten_at_its_own_length_loses_entries() -> None:
    """Git only appends to a reflog: one whose commit ids were swapped for others of the same
    length lost what it said, though it is no shorter."""
    was = f"{'1' * 40} {'2' * 40} Ada <ada@example.org> 1700000000 +0000\tcommit: one\n"
    forged = was.replace("2" * 40, "3" * 40)
    effects = EffectSet((Effect(".git/logs/HEAD", blob(was), blob(forged)),))
    assert effects.summary == "erases reflog entries of HEAD"
    assert effects.categories() == {"overwrites": (".git/logs/HEAD",)}


def test_a_reflog_that_grew_loses_nothing() -> None:
    effects = EffectSet((Effect(".git/logs/HEAD", blob("one"), blob("one two")),))
    assert effects.categories() == {}
    assert effects.summary == "changes nothing in the workspace"


def test_long_lists_of_git_losses_are_cut_past_twenty_names() -> None:
    def chmod(count: int) -> EffectSet:
        return EffectSet(
            tuple(
                Effect(f".git/refs/tags/t{n:02}", blob("id"), blob("id", 0o000))
                for n in range(count)
            )
        )

    names = [f".git/refs/tags/t{n:02}" for n in range(21)]
    assert chmod(20).summary == f"changes permissions in .git of {', '.join(names[:20])}"
    assert chmod(21).summary == (
        f"changes permissions in .git of {', '.join(names[:20])} and 1 more"
    )
