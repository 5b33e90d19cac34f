"""The file tools' writes, deletes and moves go through the change journal: what they overwrite
or delete is backed up first, /undo restores exactly the prior state, and a later change to
the same file makes the undo refuse rather than lose it."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from core.errors import ToolFailed
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.effects import EffectSettings, ShellEffects, UndoRefused, UndoUnavailable, host
from core.tools.effects.objects import ObjectStore
from core.tools.file_ops import FileOps
from core.tools.sandbox import DockerEngine, SandboxLimits
from core.tools.workspace import Workspace
from tests.core.tools.effects.support import make, snapshot

BASE = {
    "notes/private.txt": "the owner's own words\n",
    "notes/todo.md": "- buy milk\n",
    "tree/a.txt": "a",
    "tree/deep/b.txt": "b",
    "tree/empty/": "",
}


@pytest.fixture
async def journal(
    workspace: Workspace, home: Path, capabilities: CapabilityTokens
) -> AsyncIterator[ShellEffects]:
    """The effect engine as the file tools use it: its journal and backups (no dry run here,
    so no image is needed)."""
    limits = SandboxLimits(image="lancelot-unused:none")
    async with ShellEffects(
        DockerEngine(), workspace, home, capabilities, limits, EffectSettings(pool_size=0)
    ) as engine:
        yield engine


@pytest.fixture
def ops(workspace: Workspace, capabilities: CapabilityTokens, journal: ShellEffects) -> FileOps:
    make(workspace.root, BASE)
    return FileOps(workspace, capabilities, journal)


async def do(ops: FileOps, tokens: CapabilityTokens, capability: str, **params: Any) -> ToolResult:
    action = ops.action(capability, **params)
    return await ops.run(action, tokens.issue(action.digest))


STEPS: list[tuple[str, dict[str, Any]]] = [
    ("file.write", {"path": "notes/private.txt", "content": "rewritten by a page"}),
    ("file.write", {"path": "new/deeper/file.txt", "content": "fresh"}),
    ("file.delete", {"path": "notes/todo.md"}),
    ("file.delete", {"path": "tree", "recursive": True}),
    ("file.move", {"source": "notes/private.txt", "target": "notes/moved.txt"}),
    ("file.move", {"source": "notes/todo.md", "target": "notes/private.txt"}),
    ("file.move", {"source": "tree", "target": "elsewhere/tree"}),
]


@pytest.mark.parametrize(("capability", "params"), STEPS, ids=[s[0] for s in STEPS])
async def test_every_file_change_is_undone_exactly(
    ops: FileOps,
    capabilities: CapabilityTokens,
    journal: ShellEffects,
    workspace: Workspace,
    capability: str,
    params: dict[str, Any],
) -> None:
    before = snapshot(workspace.root)
    result = await do(ops, capabilities, capability, **params)
    assert result.exit_code == 0, result.output
    assert result.change_id is not None
    assert snapshot(workspace.root) != before
    listed = await journal.recent_changes()
    assert [c.id for c in listed] == [result.change_id]
    await journal.undo(result.change_id)
    assert snapshot(workspace.root) == before


async def test_an_overwrite_keeps_the_old_content_until_undone(
    ops: FileOps, capabilities: CapabilityTokens, journal: ShellEffects, workspace: Workspace
) -> None:
    target = workspace.root / "notes/private.txt"
    result = await do(ops, capabilities, "file.write", path="notes/private.txt", content="new")
    assert target.read_text() == "new"
    change = (await journal.recent_changes())[0]
    assert change.command == "write /workspace/notes/private.txt"
    assert "notes/private.txt" in change.summary
    assert result.change_id == change.id
    await journal.undo(change.id)
    assert target.read_text() == "the owner's own words\n"
    with pytest.raises(UndoUnavailable, match="it was already undone"):
        await journal.undo(change.id)


async def test_undo_refuses_when_a_later_change_touched_the_file(
    ops: FileOps, capabilities: CapabilityTokens, journal: ShellEffects, workspace: Workspace
) -> None:
    first = await do(ops, capabilities, "file.write", path="notes/todo.md", content="one")
    (workspace.root / "notes/todo.md").write_text("the owner edited it since")
    assert first.change_id is not None
    with pytest.raises(UndoRefused, match=r"notes/todo\.md"):
        await journal.undo(first.change_id)
    assert (workspace.root / "notes/todo.md").read_text() == "the owner edited it since"


async def test_a_file_that_appeared_since_the_decision_is_not_overwritten(
    ops: FileOps, capabilities: CapabilityTokens, journal: ShellEffects, workspace: Workspace
) -> None:
    action = ops.action("file.write", path="notes/new.txt", content="planned")
    assert action.params["overwrites"] is False
    (workspace.root / "notes/new.txt").write_text("arrived meanwhile")
    with pytest.raises(ToolFailed, match="appeared since this was decided"):
        await ops.run(action, capabilities.issue(action.digest))
    assert (workspace.root / "notes/new.txt").read_text() == "arrived meanwhile"
    assert await journal.recent_changes() == []


async def test_a_directory_is_deleted_only_when_asked_to_be(
    ops: FileOps, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    result = await do(ops, capabilities, "file.delete", path="tree")
    assert result.exit_code == 1
    assert "recursive" in result.output
    assert (workspace.root / "tree/deep/b.txt").exists()


async def test_a_move_into_itself_is_refused(
    ops: FileOps, capabilities: CapabilityTokens, workspace: Workspace
) -> None:
    before = snapshot(workspace.root)
    result = await do(ops, capabilities, "file.move", source="tree", target="tree/deep/tree")
    assert result.exit_code == 1
    assert snapshot(workspace.root) == before


async def test_a_missing_file_is_reported_not_journaled(
    ops: FileOps, capabilities: CapabilityTokens, journal: ShellEffects
) -> None:
    result = await do(ops, capabilities, "file.delete", path="notes/none.txt")
    assert result.exit_code == 1
    assert "no such file" in result.output
    assert await journal.recent_changes() == []


async def test_a_tree_too_large_for_one_change_is_refused_whole(
    ops: FileOps,
    capabilities: CapabilityTokens,
    workspace: Workspace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The module itself, not its dotted name: the mutation runner imports the package afresh
    # without its submodules' attributes.
    assert host.MAX_TREE > 3
    monkeypatch.setattr(host, "MAX_TREE", 3)
    with pytest.raises(ToolFailed, match="more than 3 paths; nothing was changed"):
        await do(ops, capabilities, "file.delete", path="tree", recursive=True)
    assert (workspace.root / "tree/deep/b.txt").read_text() == "b"


async def test_a_write_never_replaces_a_folder(
    ops: FileOps, capabilities: CapabilityTokens, journal: ShellEffects, workspace: Workspace
) -> None:
    before = snapshot(workspace.root)
    with pytest.raises(ToolFailed, match="folder"):
        await do(ops, capabilities, "file.write", path="tree/empty", content="x")
    assert snapshot(workspace.root) == before
    assert await journal.recent_changes() == []


async def test_a_move_keeps_the_old_content_without_a_copy_and_shares_no_inode_with_it(
    ops: FileOps, capabilities: CapabilityTokens, workspace: Workspace, home: Path
) -> None:
    """The undo store keeps the old name's very inode (no copy); the new name is its own
    file, so a later write in place cannot change that backup."""
    source = workspace.root / "notes/todo.md"
    inode = source.stat().st_ino
    result = await do(ops, capabilities, "file.move", source="notes/todo.md", target="moved.md")
    assert result.exit_code == 0, result.output
    kept = ObjectStore(home / "undo" / "objects").path(hashlib.sha256(b"- buy milk\n").hexdigest())
    assert kept.stat().st_ino == inode
    moved = workspace.root / "moved.md"
    assert moved.read_text() == "- buy milk\n"
    assert moved.stat().st_ino != inode
    assert moved.stat().st_nlink == 1
