"""FileOps against real files: traversal payloads never escape, secrets stay shut, writes are
atomic and every change is hashed."""

from __future__ import annotations

import hashlib
import itertools
import os
from pathlib import Path
from typing import Any

import pytest

from core.errors import PolicyDenied, ToolFailed
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.file_ops import FileOps
from core.tools.workspace import Workspace
from tests.core.tools.test_workspace_guard import all_payloads

MARK = "SENTINEL-OUTSIDE"


async def do(ops: FileOps, tokens: CapabilityTokens, capability: str, **params: Any) -> ToolResult:
    action = ops.action(capability, **params)
    return await ops.run(action, tokens.issue(action.digest))


@pytest.fixture
def jail(tmp_path: Path) -> tuple[Path, Workspace]:
    """A workspace deep inside tmp_path, with bait files where escapes would land."""
    ws = Workspace(tmp_path / "a" / "b" / "c" / "ws")
    (ws.root / "notes").mkdir()
    for bait in ("a/b/c/secret", "a/b/secret", "a/b/etc/passwd", "a/etc/passwd", "a/b/c/x"):
        (tmp_path / bait).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / bait).write_text(MARK)
    return tmp_path, ws


def outside_files(top: Path, ws: Workspace) -> dict[Path, str]:
    return {
        p: p.read_text(errors="replace")
        for p in top.rglob("*")
        if p.is_file() and not p.is_relative_to(ws.root)
    }


async def test_traversal_payloads_through_every_operation_never_escape(
    jail: tuple[Path, Workspace], tokens: CapabilityTokens
) -> None:
    top, ws = jail
    ops = FileOps(ws, tokens)
    before = outside_files(top, ws)
    names = [p + s for p, s in itertools.product(all_payloads(), ("", "/x", "/../y"))]
    assert len(names) > 1200
    leaks: list[str] = []
    for name in names:
        for capability, params in (
            ("file.read", {"path": name}),
            ("file.list", {"path": name}),
            ("file.write", {"path": name, "content": "ESCAPED"}),
            ("file.delete", {"path": name, "recursive": True}),
            ("file.move", {"source": "notes", "target": name}),
        ):
            try:
                result = await do(ops, tokens, capability, **params)
            except (PolicyDenied, ToolFailed):
                continue
            if MARK in result.output:
                leaks.append(f"{capability} {name!r}")
    assert leaks == []
    assert outside_files(top, ws) == before  # nothing written, deleted or moved outside


async def test_symlinks_out_of_the_workspace_lead_nowhere(
    jail: tuple[Path, Workspace], tokens: CapabilityTokens
) -> None:
    top, ws = jail
    ops = FileOps(ws, tokens)
    os.symlink(top / "a" / "b", ws.root / "out")
    os.symlink(top / "a" / "b" / "secret", ws.root / "secret-link")
    for capability, params in (
        ("file.read", {"path": "secret-link"}),
        ("file.read", {"path": "out/secret"}),
        ("file.write", {"path": "out/new.txt", "content": "x"}),
        ("file.write", {"path": "secret-link", "content": "x"}),
        ("file.list", {"path": "out"}),
        ("file.delete", {"path": "out/secret"}),
        ("file.move", {"source": "secret-link", "target": "stolen"}),
    ):
        with pytest.raises(PolicyDenied):
            await do(ops, tokens, capability, **params)
    assert (top / "a" / "b" / "secret").read_text() == MARK
    assert not (top / "a" / "b" / "new.txt").exists()


class SwappingWorkspace(Workspace):
    """Swaps `notes/` for a symlink out of the workspace right after the guard approved a
    path: the race a concurrent writer (the sandbox) could try."""

    target: Path
    armed = False

    def resolve(self, name: str, *, allow_sensitive: bool = False) -> Path:
        real = super().resolve(name, allow_sensitive=allow_sensitive)
        notes = self.root / "notes"
        if self.armed and not notes.is_symlink():
            os.rename(notes, self.root / "notes-moved")
            os.symlink(self.target, notes)
        return real


@pytest.mark.parametrize(
    ("capability", "params"),
    [
        ("file.write", {"path": "notes/a.txt", "content": "ESCAPED"}),
        ("file.read", {"path": "notes/secret"}),
        ("file.delete", {"path": "notes/secret"}),
        ("file.list", {"path": "notes"}),
    ],
)
async def test_a_symlink_swapped_in_after_the_check_is_caught(
    tmp_path: Path, tokens: CapabilityTokens, capability: str, params: dict[str, Any]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text(MARK)
    ws = SwappingWorkspace(tmp_path / "ws")
    ws.target = outside
    (ws.root / "notes").mkdir()
    (ws.root / "notes" / "secret").write_text("inside")
    ops = FileOps(ws, tokens)
    action = ops.action(capability, **params)
    ws.armed = True
    with pytest.raises(PolicyDenied, match="symlink"):
        await ops.run(action, tokens.issue(action.digest))
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]
    assert (outside / "secret").read_text() == MARK


@pytest.mark.parametrize(
    "name",
    [
        ".env",
        "app/.env.production",
        ".ssh/id_ed25519",
        "deploy/id_rsa",
        "certs/site.pem",
        "tls/server.key",
        "aws/credentials",
        ".git/config",
        ".git/hooks/pre-commit",
        ".npmrc",
        ".docker/config.json",
        ".kube/config",
    ],
)
async def test_sensitive_files_are_refused_for_reading_and_writing(
    ws: Workspace, tokens: CapabilityTokens, name: str
) -> None:
    target = ws.root / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("secret")
    ops = FileOps(ws, tokens)
    for capability, params in (
        ("file.read", {"path": name}),
        ("file.write", {"path": name, "content": "x"}),
        ("file.delete", {"path": name}),
    ):
        with pytest.raises(PolicyDenied, match="sensitive"):
            await do(ops, tokens, capability, **params)
    assert target.read_text() == "secret"


async def test_write_is_atomic_and_hashed(ws: Workspace, tokens: CapabilityTokens) -> None:
    ops = FileOps(ws, tokens)
    (ws.root / "docs").mkdir()
    old = ws.root / "docs" / "a.txt"
    old.write_text("old content")
    with old.open() as reader:  # a reader of the old file sees it whole, never half-written
        result = await do(ops, tokens, "file.write", path="docs/a.txt", content="new ✓")
        assert reader.read() == "old content"
    assert result.exit_code == 0
    assert old.read_text() == "new ✓"
    sha = hashlib.sha256("new ✓".encode()).hexdigest()
    assert result.file_changes == {"/workspace/docs/a.txt": sha}
    assert sorted(p.name for p in (ws.root / "docs").iterdir()) == ["a.txt"]  # no temp left
    nested = await do(ops, tokens, "file.write", path="/workspace/x/y/z.md", content="")
    assert (ws.root / "x" / "y" / "z.md").read_text() == ""
    assert nested.file_changes == {"/workspace/x/y/z.md": hashlib.sha256(b"").hexdigest()}


async def test_read_list_move_delete(ws: Workspace, tokens: CapabilityTokens) -> None:
    ops = FileOps(ws, tokens)
    (ws.root / "src").mkdir()
    (ws.root / "src" / "main.py").write_text("print('hi')\n")
    (ws.root / "readme.md").write_text("# hi\n")
    read = await do(ops, tokens, "file.read", path="src/main.py")
    assert (read.exit_code, read.output) == (0, "print('hi')\n")
    listing = await do(ops, tokens, "file.list", path="/workspace")
    assert listing.output.splitlines() == ["readme.md  5 bytes", "src/"]
    deep = await do(ops, tokens, "file.list", recursive=True)
    assert "src/main.py  12 bytes" in deep.output.splitlines()
    moved = await do(ops, tokens, "file.move", source="readme.md", target="docs/README.md")
    assert moved.file_changes == {
        "/workspace/readme.md": None,
        "/workspace/docs/README.md": hashlib.sha256(b"# hi\n").hexdigest(),
    }
    assert (ws.root / "docs" / "README.md").read_text() == "# hi\n"
    refused = await do(ops, tokens, "file.delete", path="src")
    assert refused.exit_code == 1
    assert "directory" in refused.output
    gone = await do(ops, tokens, "file.delete", path="src", recursive=True)
    assert gone.file_changes == {"/workspace/src": None}
    assert not (ws.root / "src").exists()
    missing = await do(ops, tokens, "file.read", path="src/main.py")
    assert missing.exit_code == 1
    assert "no such file" in missing.output


async def test_a_move_judged_harmless_refuses_once_the_target_appears(
    ws: Workspace, tokens: CapabilityTokens
) -> None:
    ops = FileOps(ws, tokens)
    (ws.root / "a.txt").write_text("a")
    action = ops.action("file.move", source="a.txt", target="b.txt")
    assert action.params["overwrites"] is False
    (ws.root / "b.txt").write_text("precious")
    with pytest.raises(ToolFailed, match="appeared"):
        await ops.run(action, tokens.issue(action.digest))
    assert (ws.root / "b.txt").read_text() == "precious"


async def test_nothing_runs_without_the_capability_for_exactly_this_action(
    ws: Workspace, tokens: CapabilityTokens
) -> None:
    ops = FileOps(ws, tokens)
    (ws.root / "keep.txt").write_text("keep")
    read = ops.action("file.read", path="keep.txt")
    delete = ops.action("file.delete", path="keep.txt")
    with pytest.raises(PolicyDenied, match="does not match"):
        await ops.run(delete, tokens.issue(read.digest))
    with pytest.raises(PolicyDenied, match="no capability"):
        await ops.run(delete, None)
    assert (ws.root / "keep.txt").exists()
