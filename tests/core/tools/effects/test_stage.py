"""Checking and staging an apply on the host: a workspace and a dry run's upper layer laid out
by hand (or the undo store as the source), so every case is exact and no sandbox is needed."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from core.tools.effects.errors import EffectsError, StaleEffects
from core.tools.effects.model import ABSENT, Effect, FileState
from core.tools.effects.sources import ObjectSource, UpperSource
from core.tools.effects.stage import Plan, abandon, prepare
from tests.core.tools.effects.layers import Layers, sha, state, write
from tests.core.tools.effects.support import NOBODY, as_nobody, shared_folder


@pytest.fixture
def layers(tmp_path: Path) -> Layers:
    return Layers(tmp_path)


def staged_file(layers: Layers, plan: Plan, path: str) -> Path:
    return layers.workspace / plan.staging / plan.staged[path][0]


def test_a_plan_stages_new_contents_and_keeps_what_will_be_lost(layers: Layers) -> None:
    write(layers.workspace, {"gone.txt": "old", "notes.md": "draft", "run.sh": "echo"})
    write(layers.upper, {"new.txt": "new", "notes.md": "final", "run.sh": "echo"})
    os.chmod(layers.upper / "run.sh", 0o700)
    effects = layers.effects("gone.txt", "new.txt", "notes.md", "run.sh")
    plan = layers.prepare(effects)
    assert plan.todo == {"gone.txt", "new.txt", "notes.md", "run.sh"}
    # Only new content is staged (a change of mode is made in place), each a link to the
    # upper layer's file, which no container holds any more: no copy.
    assert plan.staged == {
        "new.txt": ("1", os.stat(layers.upper / "new.txt").st_ino),
        "notes.md": ("2", os.stat(layers.upper / "notes.md").st_ino),
    }
    assert staged_file(layers, plan, "notes.md").read_text() == "final"
    # What is overwritten or deleted is kept for an undo; the file whose mode changes is not.
    assert plan.objects == {sha("old"): 3, sha("draft"): 5}
    assert layers.store.path(sha("old")).read_text() == "old"
    assert layers.store.path(sha("draft")).read_text() == "draft"
    assert not layers.store.has(sha("echo"))
    assert (layers.workspace / "gone.txt").read_text() == "old"  # nothing changed yet


def test_the_staging_folder_is_hidden_private_and_gone_when_abandoned(layers: Layers) -> None:
    write(layers.upper, {"new.txt": "new"})
    plan = layers.prepare(layers.effects("new.txt"))
    staging = layers.workspace / plan.staging
    assert plan.staging.startswith(".lancelot-staging-")  # hidden; start-up sweeps leftovers
    assert stat.S_IMODE(os.stat(staging).st_mode) == 0o700
    abandon(layers.workspace, plan)
    assert not staging.exists()
    assert sorted(os.listdir(layers.workspace)) == []


def test_a_plan_leaves_no_file_open(layers: Layers) -> None:
    """Each apply or undo opens the staging folder and every file it copies: a long-running
    Lancelot must close them all."""
    write(layers.store.path(sha("kept")).parent, {sha("kept"): "kept"})
    open_before = len(os.listdir("/proc/self/fd"))
    restore = (Effect("back.txt", ABSENT, FileState("file", 0o644, 4, sha("kept"))),)
    write(layers.upper, {"new.txt": "new"})
    for plan in (
        layers.prepare(layers.effects("new.txt")),
        prepare(layers.workspace, restore, ObjectSource(layers.store), None),
    ):
        abandon(layers.workspace, plan)
    assert len(os.listdir("/proc/self/fd")) == open_before


def test_content_from_the_undo_store_is_copied_with_the_mode_and_owner_it_had(
    layers: Layers,
) -> None:
    """Never linked: a kept object may back several changes, and a workspace file sharing its
    inode could rewrite it."""
    kept = layers.store.path(sha("kept"))
    write(kept.parent, {kept.name: "kept"})
    owner = 4321 if os.geteuid() == 0 else os.geteuid()  # only root can give files away
    back = FileState("file", 0o750, 4, sha("kept"), uid=owner, gid=owner)
    plan = prepare(
        layers.workspace, (Effect("back.txt", ABSENT, back),), ObjectSource(layers.store), None
    )
    copy = os.stat(staged_file(layers, plan, "back.txt"))
    assert copy.st_ino != os.stat(kept).st_ino
    assert (stat.S_IMODE(copy.st_mode), copy.st_uid, copy.st_gid) == (0o750, owner, owner)
    assert staged_file(layers, plan, "back.txt").read_text() == "kept"


def test_a_lancelot_not_run_as_root_stages_files_as_its_own(tmp_path: Path) -> None:
    """Only root may give a file away: run as another user, an undo restores a root-owned
    file's content as that user's file rather than failing (as root, run as nobody)."""
    if os.geteuid() != 0:
        assert stage_as_this_user(tmp_path) == os.geteuid()
        return
    assert stage_as_this_user(tmp_path) == 0  # root gives it to its owner, root
    with shared_folder() as base:  # /tmp: a user other than root can reach it
        os.chown(base, NOBODY, NOBODY)
        assert as_nobody(lambda: str(stage_as_this_user(base))) == str(NOBODY)


def stage_as_this_user(base: Path) -> int:
    """Stage a root-owned file's kept content; the staged copy's owner."""
    layers = Layers(base)
    kept = layers.store.path(sha("root's"))
    write(kept.parent, {kept.name: "root's"})
    back = FileState("file", 0o644, 6, sha("root's"), uid=0, gid=0)
    plan = prepare(
        layers.workspace, (Effect("back", ABSENT, back),), ObjectSource(layers.store), None
    )
    return os.stat(staged_file(layers, plan, "back")).st_uid


def test_an_upper_layer_on_another_filesystem_is_copied(tmp_path: Path) -> None:
    """LANCELOT_HOME (the upper layers) on another disk than the workspace: no link can
    cross, so the content is copied."""
    with tempfile.TemporaryDirectory(dir="/dev/shm") as other:
        layers = Layers(tmp_path)
        layers.upper = Path(other)
        assert os.stat(layers.upper).st_dev != os.stat(layers.workspace).st_dev
        write(layers.upper, {"big.bin": "x" * (3 << 20)})
        plan = layers.prepare(layers.effects("big.bin"))
        copy = staged_file(layers, plan, "big.bin")
        assert copy.read_text() == "x" * (3 << 20)
        assert os.stat(copy).st_ino != os.stat(layers.upper / "big.bin").st_ino


def test_a_copy_that_no_longer_matches_its_hash_stages_nothing(layers: Layers) -> None:
    write(layers.upper, {"a.txt": "approved", "b.txt": "fine"})
    effects = layers.effects("a.txt", "b.txt")
    (layers.upper / "a.txt").write_text("switched")
    with pytest.raises(EffectsError) as refused:
        layers.prepare(effects)
    assert str(refused.value) == "a.txt: the dry run's copy no longer matches its hash"
    assert os.listdir(layers.workspace) == []  # the staging folder removed


def test_a_path_not_as_the_dry_run_saw_it_is_stale(layers: Layers) -> None:
    write(layers.workspace, {"notes.md": "draft", "other.md": "x"})
    write(layers.upper, {"notes.md": "final", "other.md": "y"})
    effects = layers.effects("notes.md", "other.md")
    (layers.workspace / "notes.md").write_text("edited since")
    with pytest.raises(StaleEffects) as refused:
        layers.prepare(effects)
    assert refused.value.paths == ("notes.md",)
    assert sorted(os.listdir(layers.workspace)) == ["notes.md", "other.md"]  # nothing staged
    assert not layers.store.has(sha("x"))


def test_a_delete_already_done_is_stale_unless_an_undo_resumes(layers: Layers) -> None:
    """A file the dry run deletes that is already gone was not what was approved; an undo
    finishing what a cut-short one began counts it done. Anything else is stale either way."""
    write(layers.workspace, {"gone.txt": "old", "kept.txt": "mine", "new.txt": "x"})
    write(layers.upper, {"kept.txt": "theirs", "new.txt": "x"})
    effects = layers.effects("gone.txt", "kept.txt")
    (layers.workspace / "gone.txt").unlink()
    assert layers.check(effects) == ({"kept.txt"}, ["gone.txt"])
    assert layers.check(effects, resume=True) == ({"kept.txt"}, [])
    (layers.workspace / "kept.txt").write_text("a third text")
    assert layers.check(effects, resume=True) == (set(), ["kept.txt"])
    with pytest.raises(StaleEffects):
        layers.prepare(effects[:1])  # resume is asked for, never assumed


def test_a_resumed_plan_stages_and_keeps_only_what_is_left(layers: Layers) -> None:
    write(layers.workspace, {"a.txt": "one", "b.txt": "two"})
    effects = layers.effects("a.txt", "b.txt")  # both deleted
    (layers.workspace / "a.txt").unlink()
    plan = layers.prepare(effects, resume=True)
    assert plan.todo == {"b.txt"}
    assert plan.objects == {sha("two"): 3}


def test_a_new_file_needs_its_folder_there_or_made_by_the_same_change(layers: Layers) -> None:
    write(layers.workspace, {"sub/": "", "gone/": "", "swapped/": ""})
    write(layers.upper, {"made/new.txt": "a", "sub/new.txt": "b", "gone/new.txt": "c",
                         "swapped/new.txt": "d"})  # fmt: skip
    effects = layers.effects("made", "made/new.txt", "sub/new.txt", "gone/new.txt",
                             "swapped/new.txt")  # fmt: skip
    (layers.workspace / "gone").rmdir()
    (layers.workspace / "swapped").rmdir()
    (layers.workspace / "swapped").write_text("a file where the folder was")
    assert layers.check(effects) == (
        {"made", "made/new.txt", "sub/new.txt"},
        ["gone/new.txt", "swapped/new.txt"],
    )


def test_the_workspace_root_itself_may_change_mode(layers: Layers) -> None:
    root = state(layers.workspace, ".")
    effect = Effect(".", root, FileState("dir", 0o750))
    assert layers.check((effect,)) == ({"."}, [])


def test_a_folder_to_delete_must_hold_only_what_the_dry_run_saw(layers: Layers) -> None:
    write(layers.workspace, {"d/x": "x"})
    effects = layers.effects("d", "d/x")
    assert layers.check(effects) == ({"d", "d/x"}, [])
    write(layers.workspace, {"d/late.txt": "written after the dry run"})
    assert layers.check(effects) == ({"d/x"}, ["d"])


def test_a_folder_an_undo_already_made_again_counts_done_when_it_holds_what_it_held(
    layers: Layers,
) -> None:
    write(layers.workspace, {"d/x": "x"})
    held = state(layers.workspace, "d")
    effect = Effect("d", ABSENT, held)  # the undo of its deletion
    assert layers.check((effect,), resume=True) == (set(), [])
    write(layers.workspace, {"d/late.txt": "not what it held"})
    assert layers.check((effect,), resume=True) == (set(), ["d"])


def test_each_content_is_kept_once_and_what_is_kept_already_is_not_read_again(
    layers: Layers,
) -> None:
    write(layers.workspace, {"a-new/": "", "copy1": "same", "copy2": "same", "d/x": "x",
                             "known": "kept before", "notes": "draft"})  # fmt: skip
    write(layers.upper, {"a-new/": "", "a-new/f": "f"})
    effects = layers.effects("a-new/f", "copy1", "copy2", "d", "d/x", "known", "notes")
    known = layers.store.path(sha("kept before"))
    write(known.parent, {known.name: "kept before"})
    plan = layers.prepare(effects)
    assert plan.objects == {sha("same"): 4, sha("x"): 1, sha("kept before"): 11, sha("draft"): 5}
    assert all(layers.store.has(s) for s in plan.objects)


def test_nothing_is_kept_without_a_store(layers: Layers) -> None:
    write(layers.workspace, {"gone.txt": "old"})
    with UpperSource(layers.upper) as source:
        plan = prepare(layers.workspace, layers.effects("gone.txt"), source, None)
    assert plan.todo == {"gone.txt"}
    assert plan.objects == {}
    assert not layers.store.has(sha("old"))


class Racing:
    """A content source that, as a racing program would, rewrites a workspace file while the
    change is being staged (after the check, before the backups)."""

    linkable = False

    def __init__(self, upper: Path, victim: Path) -> None:
        self._upper, self._victim = upper, victim

    def open(self, effect: Effect) -> int:
        self._victim.write_text("rewritten while staged")
        return os.open(self._upper / effect.path, os.O_RDONLY)


def test_a_file_rewritten_while_the_change_is_staged_is_stale_not_kept(layers: Layers) -> None:
    write(layers.workspace, {"notes.md": "draft"})
    write(layers.upper, {"new.txt": "new", "notes.md": "final"})
    effects = layers.effects("new.txt", "notes.md")
    with pytest.raises(StaleEffects) as refused:
        prepare(layers.workspace, effects, Racing(layers.upper, layers.workspace / "notes.md"),
                layers.store)  # fmt: skip
    assert refused.value.paths == ("notes.md",)
    assert not layers.store.has(sha("draft"))
    assert not layers.store.has(sha("rewritten while staged"))
    assert os.listdir(layers.workspace) == ["notes.md"]


def test_under_a_symlink_the_change_replaces_with_a_folder_nothing_is_there_yet(
    layers: Layers,
) -> None:
    """The undo of `rm -r d && ln -s elsewhere d`: the link goes before anything is put under
    it, so what is under it counts as absent. Under a link the change keeps, even in a folder
    whose mode it changes, nothing is absent: the path is never reached through it (stale)."""
    outside = layers.workspace.parent / "outside"
    write(outside, {"e/x": "outside", "y": "outside", "z": "outside"})
    write(layers.workspace, {"a/": "", "m/": ""})
    for link in ("d", "a/d", "kept", "m/link"):
        os.symlink(outside, layers.workspace / link)
    folder = FileState("dir", 0o755)
    new = FileState("file", 0o644, 1, sha("x"))
    effects = (
        Effect("a/d", state(layers.workspace, "a/d"), folder),
        Effect("a/d/x", ABSENT, new),
        Effect("d", state(layers.workspace, "d"), folder),
        Effect("d/e", ABSENT, folder),
        Effect("d/e/x", ABSENT, new),
        Effect("kept/y", ABSENT, new),
        Effect("m", state(layers.workspace, "m"), FileState("dir", 0o700)),
        Effect("m/link/new", ABSENT, folder),
        Effect("m/link/new/z", ABSENT, new),
        Effect("m/link/z", ABSENT, new),
    )
    assert layers.check(effects) == (
        {"a/d", "a/d/x", "d", "d/e", "d/e/x", "m"},
        ["kept/y", "m/link/new", "m/link/new/z", "m/link/z"],
    )


def test_an_undo_resumed_under_a_folder_already_back_reads_what_is_there(
    layers: Layers,
) -> None:
    write(layers.workspace, {"d/e/x": "x"})
    os.chmod(layers.workspace / "d", 0o700)
    os.chmod(layers.workspace / "d" / "e", 0o700)
    os.chmod(layers.workspace / "d" / "e" / "x", 0o644)
    folder = FileState("dir", 0o700)
    effects = (
        Effect("d", FileState("symlink", 0o777, target="elsewhere"), folder),
        Effect("d/e", ABSENT, folder),
        Effect("d/e/x", ABSENT, FileState("file", 0o644, 1, sha("x"))),
    )
    assert layers.check(effects, resume=True) == (set(), [])
