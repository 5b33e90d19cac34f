"""The rollback journal on its own, over a real workspace: what a T1 step names is saved
before it runs and put back exactly (files, links, folders, what did not exist), newest
step first; what is too big to keep is named; a check that cannot run fails its step; and
every failure and restore is a receipt."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest

from core.governance.rollback import (
    MAX_SNAPSHOT_BYTES,
    RollbackJournal,
    Verifier,
    default_verifier,
    touched_paths,
)
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.workspace import Workspace

SHELL = "shell.exec"
OK = ToolResult(0, "")


def step(command: str, **params: object) -> ToolAction:
    return ToolAction(SHELL, command, {"in_workspace": True, **params})


async def refuse(action: ToolAction, result: ToolResult) -> str | None:
    """A check that fails every step."""
    return "the check said no"


async def accept(action: ToolAction, result: ToolResult) -> str | None:
    """A check that passes every step."""
    return None


def tree(root: Path) -> dict[str, object]:
    """Every path under `root`: a link's target, a file's bytes and mode, or "dir"."""
    seen: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if path.is_symlink():
            seen[name] = ("link", os.readlink(path))
        elif path.is_dir():
            seen[name] = "dir"
        else:
            seen[name] = (path.read_bytes(), path.stat().st_mode & 0o777)
    return seen


async def journal(
    workspace: Workspace, ledger: SqliteLedger, home: Path, check: Verifier = refuse
) -> RollbackJournal:
    made = await RollbackJournal.create(workspace, ledger, home)
    made._verifier = check  # the test's own check
    return made


async def receipts(ledger: SqliteLedger, kind: str) -> list[tuple[str, dict[str, object], str]]:
    """(status, inputs with outputs and metadata, ...) of the journal's receipts of `kind`."""
    await ledger.flush()
    page = await ledger.page(ReceiptQuery(action_type=kind))
    return [
        (
            r.status,
            {**r.decoded("inputs"), **r.decoded("outputs"), **r.decoded("metadata")},
            r.action_name,
        )
        for r in reversed(page.receipts)
    ]


def test_the_paths_a_step_names_are_those_inside_the_workspace_once_each(
    workspace: Workspace,
) -> None:
    action = ToolAction(
        SHELL,
        "cp -r a . ../../etc/passwd b a",
        {"path": "c", "src": "d", "dst": "e", "source": "f", "target": "/etc", "x": "g"},
    )
    names = [workspace.display(p) for p in touched_paths(action, workspace)]
    assert names == [f"/workspace/{n}" for n in ("a", "b", "c", "d", "e", "f")]
    action = ToolAction("file.write", "echo 'unclosed", {"destination": "h", "path": 7})
    assert [workspace.display(p) for p in touched_paths(action, workspace)] == ["/workspace/h"]
    action = ToolAction("file.write", None, {"target": "i"})  # a tool call: no command line
    assert [workspace.display(p) for p in touched_paths(action, workspace)] == ["/workspace/i"]
    # A link and where it leads are each saved unless off limits (a key, a .env).
    (workspace.root / "app.key").symlink_to("notes.txt")
    (workspace.root / "shortcut").symlink_to(".env")
    action = step("sed -i s/a/b/ app.key shortcut")
    names = [workspace.display(p) for p in touched_paths(action, workspace)]
    assert names == ["/workspace/s/a/b", "/workspace/notes.txt", "/workspace/shortcut"]


async def test_a_failed_step_is_put_back_exactly_files_links_folders_and_new_names(
    workspace: Workspace, ledger: SqliteLedger, tmp_path: Path
) -> None:
    root = workspace.root
    (root / "notes.txt").write_bytes(b"before\x00\xff")
    (root / "notes.txt").chmod(0o640)
    (root / "other.txt").write_text("someone else's")
    (root / "link").symlink_to("other.txt")
    (root / "d" / "deep").mkdir(parents=True)
    (root / "d" / "deep" / "f").write_text("f")
    (root / "d" / "inner").symlink_to("deep/f")
    (root / "gone" / "deep").mkdir(parents=True)
    (root / "gone" / "deep" / "kept.txt").write_text("kept")
    before = tree(root)
    books = await journal(workspace, ledger, tmp_path / "home")
    names = ("notes.txt", "link", "d", "gone/deep/kept.txt", "new.txt")
    first = await books.snapshot(step("a step"), "q")  # names nothing, fails its check first
    books.verify_later(first, OK)
    snap = await books.snapshot(step(" ".join(("touch", *names))), "q")
    # What the step did: a file replaced by a link to another, a link by a file, a folder
    # emptied and refilled, a folder removed with what it held, a new file.
    (root / "notes.txt").unlink()
    (root / "notes.txt").symlink_to("other.txt")
    (root / "link").unlink()
    (root / "link").write_text("now a file")
    shutil.rmtree(root / "d")
    (root / "d").mkdir()
    (root / "d" / "junk").write_text("junk")
    shutil.rmtree(root / "gone")
    (root / "new.txt").write_text("new")
    books.verify_later(snap, OK)
    assert await books.barrier("q") == "a step: the check said no"
    assert tree(root) == before
    assert not list((tmp_path / "home" / "snapshots").iterdir())  # copies dropped
    paths = [f"/workspace/{n}" for n in ("notes.txt", "link", "other.txt", *names[2:])]
    failed = {
        "command": "a step",
        "action_hash": step("a step").digest,
        "paths": ["/workspace/step"],
        "outcome": "the check said no",
        "tier": "T1",
    }
    assert await receipts(ledger, "verification_failed") == [("failure", failed, SHELL)]
    restored = await receipts(ledger, "rollback")
    assert [(status, what["outcome"], what["paths"]) for status, what, _ in restored] == [
        ("success", "restored", paths),
        ("success", "restored", ["/workspace/step"]),
    ]


async def test_steps_are_undone_newest_first_and_only_when_one_fails(
    workspace: Workspace, ledger: SqliteLedger, tmp_path: Path
) -> None:
    notes = workspace.root / "notes.txt"
    notes.write_text("v0")
    checks: list[str | None] = [None, None]

    async def in_turn(action: ToolAction, result: ToolResult) -> str | None:
        return checks.pop(0)

    books = await journal(workspace, ledger, tmp_path / "home", in_turn)
    for version in ("v1", "v2"):
        snap = await books.snapshot(step("write notes.txt"), "q")
        assert len(list((tmp_path / "home" / "snapshots").iterdir())) == int(version[1])
        notes.write_text(version)
        books.verify_later(snap, OK)
    assert await books.barrier("q") is None
    assert notes.read_text() == "v2"  # both checks passed: kept
    checks[:] = ["first failed", "second failed"]
    for version in ("v3", "v4"):
        snap = await books.snapshot(step("write notes.txt"), "q")
        notes.write_text(version)
        books.verify_later(snap, OK)
    assert await books.barrier("q") == "write notes.txt: first failed"
    assert notes.read_text() == "v2"  # the older copy put back last
    assert [s for s, *_ in await receipts(ledger, "verification_failed")] == ["failure"]


async def test_what_is_too_big_to_keep_is_named_and_left_as_it_is(
    workspace: Workspace, ledger: SqliteLedger, tmp_path: Path
) -> None:
    root = workspace.root
    with (root / "edge.bin").open("wb") as edge:  # 64 MiB, sparse: a size without the bytes
        edge.truncate(64 << 20)
    with (root / "big.bin").open("wb") as big:
        big.truncate((64 << 20) + 1)
    (root / "bigdir").mkdir()
    for half in ("a", "b"):
        with (root / "bigdir" / half).open("wb") as part:
            part.truncate(MAX_SNAPSHOT_BYTES // 2 + 1)
    (root / "tolink").symlink_to("bigdir")  # a link is its own size, not its target's
    books = await journal(workspace, ledger, tmp_path / "home")
    snap = await books.snapshot(step("truncate edge.bin big.bin bigdir tolink"), "q")
    for name in ("edge.bin", "big.bin", "bigdir/a", "tolink"):
        (root / name).unlink()
    books.verify_later(snap, OK)
    assert await books.barrier("q") == "truncate edge.bin big.bin bigdir tolink: the check said no"
    assert (root / "edge.bin").stat().st_size == MAX_SNAPSHOT_BYTES  # at the bound: kept
    assert os.readlink(root / "tolink") == "bigdir"
    assert not (root / "big.bin").exists()
    assert not (root / "bigdir" / "a").exists()
    ((_, what, _),) = await receipts(ledger, "rollback")
    assert (
        what["outcome"]
        == "restored; too big to have been kept: /workspace/big.bin, /workspace/bigdir"
    )
    assert what["paths"] == ["/workspace/edge.bin", "/workspace/tolink"]


async def test_a_step_never_checked_or_whose_check_breaks_is_undone(
    workspace: Workspace, ledger: SqliteLedger, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(action: ToolAction, result: ToolResult) -> str | None:
        raise RuntimeError("the checker fell over")

    (workspace.root / "a.txt").write_text("a")
    books = await journal(workspace, ledger, tmp_path / "home", broken)
    await books.snapshot(step("rm a.txt"), "q")  # its check never started
    (workspace.root / "a.txt").unlink()
    assert await books.barrier("q") == "rm a.txt: was not verified"
    assert (workspace.root / "a.txt").read_text() == "a"
    snap = await books.snapshot(step("rm a.txt"), "q")
    (workspace.root / "a.txt").unlink()
    books.verify_later(snap, OK)
    with caplog.at_level(logging.ERROR, logger="core.governance.rollback"):
        assert await books.barrier("q") == "rm a.txt: verification could not run (RuntimeError)"
    assert (workspace.root / "a.txt").read_text() == "a"
    assert [r.getMessage() for r in caplog.records] == ["verification of rm a.txt raised"]
    assert caplog.records[0].exc_info is not None


async def test_copies_that_went_missing_are_told_not_crashed_on(
    workspace: Workspace, ledger: SqliteLedger, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (workspace.root / "a.txt").write_text("a")
    books = await journal(workspace, ledger, tmp_path / "home")
    snap = await books.snapshot(step("rm a.txt"), "q")
    (workspace.root / "a.txt").unlink()
    shutil.rmtree(snap.folder)  # the saved copy is gone (someone emptied the store)
    books.verify_later(snap, OK)
    with caplog.at_level(logging.ERROR, logger="core.governance.rollback"):
        assert await books.barrier("q") == "rm a.txt: the check said no"
    assert [r.getMessage() for r in caplog.records] == ["rollback of rm a.txt failed"]
    ((status, what, _),) = await receipts(ledger, "rollback")
    assert status == "failure"
    assert str(what["outcome"]).startswith("could not restore: [Errno 2] No such file")


async def test_a_new_journal_starts_with_an_empty_store(
    workspace: Workspace, ledger: SqliteLedger, tmp_path: Path
) -> None:
    stale = tmp_path / "home" / "snapshots" / "tmp-old"
    stale.mkdir(parents=True)
    (stale / "0").write_text("from the last run")
    await RollbackJournal.create(workspace, ledger, tmp_path / "home")
    assert not list((tmp_path / "home" / "snapshots").iterdir())


async def test_the_default_check_wants_exit_0_and_the_files_as_reported(
    workspace: Workspace,
) -> None:
    check = default_verifier(workspace)
    (workspace.root / "a.txt").write_text("a")
    wrote = "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"  # sha256("a")
    action = step("echo a > a.txt")
    assert await check(action, ToolResult(0, "", file_changes={"a.txt": None})) == (
        "a.txt does not hold what the step wrote"
    )
    assert await check(action, ToolResult(0, "", file_changes={"a.txt": wrote})) is None
    assert await check(action, ToolResult(0, "", file_changes={"gone.txt": None})) is None
    assert await check(action, ToolResult(0, "", file_changes={"gone.txt": wrote})) == (
        "gone.txt does not hold what the step wrote"
    )
    assert await check(action, ToolResult(2, "", file_changes={"a.txt": wrote})) == (
        "exited with 2"
    )
