"""A repository's changes told as git would, from effects and file contents given by hand:
refs (loose and packed), the index, objects, and the files git obeys."""

from __future__ import annotations

from core.tools.effects.git import loose_ref, packed_refs, summarise_git
from core.tools.effects.model import ABSENT, Effect, FileState, GitChanges, RefChange

ONE, TWO, THREE = "1" * 40, "2" * 40, "3" * 40
OBJECT = "objects/ab/" + "c" * 38


def blob(size: int = 41) -> FileState:
    return FileState("file", 0o644, size, "f" * 64)


DIR = FileState("dir", 0o755)


def created(path: str) -> Effect:
    return Effect(path, ABSENT, blob())


def deleted(path: str) -> Effect:
    return Effect(path, blob(), ABSENT)


def modified(path: str) -> Effect:
    return Effect(path, blob(), blob(42))


def summarise(
    effects: list[Effect], before: dict[str, bytes], after: dict[str, bytes]
) -> tuple[GitChanges, ...]:
    """summarise_git over files given as path -> content, before and after."""
    return summarise_git(effects, before.get, after.get)


def test_paths_outside_any_git_folder_are_no_repositorys_changes() -> None:
    effects = [created("notes.md"), created(".gitignore"), created("x.git/HEAD")]
    assert summarise(effects, {}, {}) == ()
    beside = [created("a.txt"), modified("site/.git/index")]  # in path order, as a scan gives
    assert summarise(beside, {}, {}) == (GitChanges("site", index_changed=True),)


def test_each_repository_is_told_apart_by_where_its_git_folder_is() -> None:
    effects = [modified("site/.git/index"), modified(".git/index"), modified("a/b/.git/index")]
    found = summarise(effects, {}, {})
    assert [changes.repo for changes in found] == ["", "a/b", "site"]
    assert all(changes.index_changed for changes in found)


def test_a_loose_branch_created_moved_and_deleted() -> None:
    effects = [
        created(".git/refs/heads/new"),
        modified(".git/refs/heads/main"),
        deleted(".git/refs/tags/old"),
    ]
    before = {".git/refs/heads/main": f"{ONE}\n".encode(), ".git/refs/tags/old": ONE.encode()}
    after = {".git/refs/heads/main": f"{TWO}\n".encode(), ".git/refs/heads/new": THREE.encode()}
    (changes,) = summarise(effects, before, after)
    assert changes == GitChanges(
        "",
        (
            RefChange("refs/heads/main", ONE, TWO),
            RefChange("refs/heads/new", None, THREE),
            RefChange("refs/tags/old", ONE, None),
        ),
    )


def test_head_is_a_ref_and_a_ref_file_rewritten_the_same_is_no_change() -> None:
    effects = [modified("w/.git/HEAD"), modified("w/.git/refs/heads/main")]
    before = {
        "w/.git/HEAD": b"ref: refs/heads/main\n",
        "w/.git/refs/heads/main": ONE.encode(),
    }
    after = {"w/.git/HEAD": b"ref: refs/heads/topic", "w/.git/refs/heads/main": f"{ONE}\n".encode()}
    (changes,) = summarise(effects, before, after)
    assert changes.refs == (RefChange("HEAD", "ref: refs/heads/main", "ref: refs/heads/topic"),)


def test_a_folder_of_refs_is_not_a_ref() -> None:
    (changes,) = summarise([Effect(".git/refs/heads/topic", ABSENT, DIR)], {}, {})
    assert changes == GitChanges("")


def test_packed_refs_are_compared_name_by_name() -> None:
    before = {
        ".git/packed-refs": (
            f"# pack-refs with: peeled fully-peeled sorted\n{ONE} refs/heads/main\n"
            f"{TWO} refs/tags/v1\n^{THREE}\n{ONE} refs/heads/gone\n"
        ).encode()
    }
    after = {".git/packed-refs": f"{TWO} refs/heads/main\n\n{TWO} refs/tags/v1\n".encode()}
    (changes,) = summarise([modified(".git/packed-refs")], before, after)
    assert changes.refs == (
        RefChange("refs/heads/gone", ONE, None),
        RefChange("refs/heads/main", ONE, TWO),
    )


def test_a_loose_ref_wins_over_its_packed_line_and_an_empty_one_leaves_it() -> None:
    packed = {".git/packed-refs": f"{ONE} refs/heads/main\n{ONE} refs/heads/topic\n".encode()}
    effects = [created(".git/refs/heads/main"), created(".git/refs/heads/topic")]
    after = {".git/refs/heads/main": TWO.encode(), ".git/refs/heads/topic": b"\n"}
    (changes,) = summarise(effects, packed, {**packed, **after})
    assert changes.refs == (RefChange("refs/heads/main", ONE, TWO),)


def test_packed_refs_unchanged_are_read_once_and_stand_for_both_sides() -> None:
    packed = {".git/packed-refs": f"{ONE} refs/heads/main\n".encode()}
    # The packed file is not among the effects: what the after side would say is not read.
    after = {".git/packed-refs": f"{TWO} refs/heads/main\n".encode()}
    (changes,) = summarise([deleted(".git/refs/heads/main")], packed, after)
    assert changes.refs == ()


def test_objects_added_and_removed_are_counted_and_a_rewritten_one_is_not() -> None:
    effects = [
        created(f".git/{OBJECT}"),
        created(".git/objects/pack/pack-" + "d" * 40 + ".pack"),
        deleted(".git/objects/ef/" + "0" * 38),
        modified(".git/objects/12/" + "3" * 38),
        created(".git/objects/info/packs"),
        created(".git/objects/pack/pack-" + "d" * 40 + ".idx"),
        Effect(".git/objects/ab", ABSENT, DIR),
    ]
    (changes,) = summarise(effects, {}, {})
    assert (changes.objects_added, changes.objects_removed, changes.other_files) == (2, 1, 0)


def test_a_sha256_repositorys_objects_are_objects_too() -> None:
    (changes,) = summarise([created(".git/objects/ab/" + "c" * 62)], {}, {})
    assert changes.objects_added == 1


def test_the_files_git_obeys_are_named_and_other_files_counted() -> None:
    obeyed = [
        "w/.git/config",
        "w/.git/config.worktree",
        "w/.git/hooks/pre-commit",
        "w/.git/info/attributes",
        "w/.git/commondir",
        "w/.git/gitdir",
    ]
    others = ["w/.git/description", "w/.git/logs/HEAD", "w/.git/info/exclude", "w/.git/ORIG_HEAD"]
    effects = [*(modified(p) for p in obeyed), *(created(p) for p in others)]
    effects.append(Effect("w/.git/logs/refs", ABSENT, DIR))
    (changes,) = summarise(effects, {}, {})
    assert changes.config_changed == tuple(obeyed)
    assert changes.other_files == len(others)
    assert changes.refs == ()
    assert not changes.index_changed


def test_a_packed_refs_file_skips_comments_peeled_and_odd_lines() -> None:
    text = f"# header\n\n{ONE} refs/heads/main\n^{TWO}\nnonsense\n{THREE} refs/tags/v1 \r\n"
    assert packed_refs(text.encode()) == {"refs/heads/main": ONE, "refs/tags/v1": THREE}
    assert packed_refs(None) == {}
    assert packed_refs(b"\xff\xfe " + ONE.encode()) == {ONE: "\ufffd\ufffd"}


def test_a_loose_ref_is_its_trimmed_first_four_kilobytes() -> None:
    assert loose_ref(None) is None
    assert loose_ref(b"") is None
    assert loose_ref(b" \n") is None
    assert loose_ref(b"ref: refs/heads/main\n") == "ref: refs/heads/main"
    assert loose_ref(b"x" * 5000) == "x" * 4096
    assert loose_ref(b"\xff" + ONE.encode()) == "\ufffd" + ONE
