"""The effect set's digest, JSON form and summary (no engine needed)."""

from __future__ import annotations

import json

import pytest

from core.tools.effects import Effect, EffectSet, FileState, GitChanges, RefChange
from core.tools.effects.model import ABSENT
from core.tools.effects.summary import size_text


def file(size: int, sha: str, mode: int = 0o644, mtime: int = 1) -> FileState:
    return FileState("file", mode, size, sha, mtime_ns=mtime, ino=7)


DIR = FileState("dir", 0o755)

SET = EffectSet(
    (
        Effect("a.txt", file(5, "a" * 64), ABSENT),
        Effect("b", DIR, ABSENT),
        Effect("b/one", file(1, "1" * 64), ABSENT),
        Effect("b/two", file(1, "2" * 64), ABSENT),
        Effect("c.log", file(3, "c" * 64), ABSENT),
        Effect("notes.md", file(2150, "n" * 64), file(0, "e" * 64)),
    )
)


def test_the_summary_reads_like_the_card_should() -> None:
    assert SET.summary == (
        "deletes 2 files and 1 folder: a.txt, b/ (2 files), c.log;"
        " overwrites notes.md (2.1 KB → 0 B)"
    )


def test_long_lists_are_cut_and_every_kind_has_words() -> None:
    made = EffectSet(
        (
            *(Effect(f"f{n:02}", ABSENT, file(1, "f" * 64)) for n in range(23)),
            Effect("link", ABSENT, FileState("symlink", 0o777, target="/etc/passwd")),
            Effect("run.sh", file(9, "r" * 64), file(9, "r" * 64, mode=0o755)),
            Effect("swap", file(9, "s" * 64), DIR),
        )
    )
    assert made.summary == (
        "replaces swap (file of 9 B → directory); creates 23 files: "
        + ", ".join(f"f{n:02}" for n in range(20))
        + " and 3 more;"
        " makes symlink link → /etc/passwd; changes permissions of run.sh (644 → 755)"
    )
    assert EffectSet().summary == "changes nothing in the workspace"


def test_git_changes_are_told_as_git_would() -> None:
    changes = GitChanges(
        "",
        (
            RefChange("HEAD", "ref: refs/heads/main", "ref: refs/heads/topic"),
            RefChange("refs/heads/old", "1234567890", None),
            RefChange("refs/tags/v1", None, "abcdef1234"),
        ),
        index_changed=True,
        objects_added=3,
    )
    effects = EffectSet((Effect(".git/index", file(1, "i" * 64), file(2, "j" * 64)),), (changes,))
    assert effects.summary == (
        "moves git HEAD (main → topic); deletes git branch old (was 1234567); creates git tag v1"
        " (at abcdef1); changes the git staging area; adds 3 git objects"
    )
    assert effects.categories() == {
        "git_refs_created": ("refs/tags/v1",),
        "git_refs_moved": ("HEAD",),
        "git_refs_deleted": ("refs/heads/old",),
        "git_index": (".",),
    }


def test_the_digest_binds_to_what_changes_not_to_times() -> None:
    later = EffectSet(
        tuple(
            Effect(e.path, FileState(**{**e.before.to_dict(), "mtime_ns": 99, "ino": 1}), e.after)
            for e in SET.effects
        )
    )
    assert later.digest == SET.digest
    other = EffectSet((*SET.effects[:-1], Effect("notes.md", file(2150, "n" * 64), ABSENT)))
    assert other.digest != SET.digest


def test_the_json_form_round_trips_and_a_tampered_one_is_refused() -> None:
    stored = json.loads(json.dumps(SET.to_dict()))
    assert EffectSet.from_dict(stored) == SET
    stored["effects"][0]["after"] = stored["effects"][5]["after"]
    with pytest.raises(ValueError, match=r"^the stored effect set does not match its digest$"):
        EffectSet.from_dict(stored)


def test_git_changes_survive_the_json_form() -> None:
    changes = GitChanges("w", (RefChange("refs/heads/old", "1" * 40, None),), objects_removed=2)
    with_git = EffectSet(SET.effects, (changes,))
    assert EffectSet.from_dict(json.loads(json.dumps(with_git.to_dict()))) == with_git


# A dry run as the change journal keeps it (its JSON, ASCII-escaped): a name not in ASCII and
# one byte that is not UTF-8 (read as a lone surrogate). Approvals pending across an upgrade
# bind to this digest, so its form must not change.
KEPT = (
    '{"digest":"6260bf6f0c789d205fbc8d5f9e5e014f5556b2172a1fc471ed32601ff30320e9","effects":'
    '[{"path":"caf\\u00e9/\\udce9t\\u00e9.txt","before":{"kind":"file","mode":420,"size":5,'
    '"sha256":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","target":null,'
    '"mtime_ns":1,"ctime_ns":0,"ino":7,"uid":-1,"gid":-1},"after":{"kind":"absent","mode":0,'
    '"size":0,"sha256":null,"target":null,"mtime_ns":0,"ctime_ns":0,"ino":0,"uid":-1,"gid":-1}}],'
    '"git":[]}'
)


def test_a_dry_run_kept_before_an_upgrade_still_reads_back() -> None:
    kept = EffectSet.from_dict(json.loads(KEPT))
    assert kept.paths() == ("caf\u00e9/\udce9t\u00e9.txt",)
    assert kept.summary == "deletes 1 file: caf\u00e9/\\xe9t\u00e9.txt"


def test_the_sandbox_names_each_file_changed_and_its_new_hash() -> None:
    """What a tool result reports: files created, changed or removed (None), by the path the
    sandbox sees; folders, symlinks and permission changes are not file changes."""
    effects = EffectSet(
        (
            Effect("d", ABSENT, DIR),
            Effect("d/new", ABSENT, file(1, "1" * 64)),
            Effect("gone", file(1, "2" * 64), ABSENT),
            Effect("link", ABSENT, FileState("symlink", 0o777, target="gone")),
            Effect("notes", file(1, "3" * 64), file(1, "4" * 64)),
            Effect("run.sh", file(1, "5" * 64), file(1, "5" * 64, mode=0o755)),
            Effect("was-dir", DIR, file(1, "6" * 64)),
            Effect("was-file", file(1, "7" * 64), DIR),
        )
    )
    assert effects.file_changes() == {
        "/workspace/d/new": "1" * 64,
        "/workspace/gone": None,
        "/workspace/notes": "4" * 64,
        "/workspace/was-dir": "6" * 64,
        "/workspace/was-file": None,
    }


def test_an_effect_set_is_empty_only_when_nothing_changes() -> None:
    assert EffectSet().empty
    assert not SET.empty
    assert SET.paths() == ("a.txt", "b", "b/one", "b/two", "c.log", "notes.md")


def test_the_receipt_form_is_bounded() -> None:
    big = EffectSet(tuple(Effect(f"f{n:03}", ABSENT, file(1, "f" * 64)) for n in range(120)))
    receipt = big.for_receipt(limit=10)
    assert len(receipt["effects"]) == 10
    assert receipt["more"] == 110
    assert receipt["counts"] == {"created": 120}
    assert receipt["digest"] == big.digest
    json.dumps(receipt)
    assert len(big.for_receipt()["effects"]) == 50  # by default
    assert big.for_receipt(limit=120)["more"] == 0


def test_the_receipt_keeps_what_the_card_showed() -> None:
    old = GitChanges("", (RefChange("refs/heads/old", "1" * 40, None),))
    gone = EffectSet((Effect("a.txt", file(5, "a" * 64), ABSENT),), (old,))
    assert gone.for_receipt() == {
        "digest": gone.digest,
        "summary": "deletes 1 file: a.txt; deletes git branch old (was 1111111)",
        "counts": {"deleted": 1},
        "categories": {"deletes": 1, "git_refs_deleted": 1},
        "effects": [
            {
                "path": "a.txt",
                "kind": "deleted",
                "before": {"kind": "file", "mode": 0o644, "size": 5, "sha256": "a" * 64,
                           "target": None},
                "after": {"kind": "absent", "mode": 0, "size": 0, "sha256": None, "target": None},
            }
        ],
        "more": 0,
        "git": [old.to_dict()],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("size", "text"), [(0, "0 B"), (3, "3 B"), (2150, "2.1 KB"), (5 << 20, "5.0 MB")]
)
def test_sizes(size: int, text: str) -> None:
    assert size_text(size) == text


def test_names_cannot_fake_lines_or_reverse_text_on_a_card() -> None:
    sneaky = EffectSet((Effect("x\nApproved by owner\u202etxt.exe", ABSENT, file(1, "f" * 64)),))
    assert sneaky.summary == "creates 1 file: x\\nApproved by owner\\u202etxt.exe"
