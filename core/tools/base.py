"""The tool interface: run one governed action, given its capability token."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from core.tools.action import ToolAction

MAX_OUTPUT = 3500


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool run produced: exit code, bounded output, files changed (name -> sha256,
    None when removed), the provider that ran it and, when preferred providers were skipped,
    why (the owner is told: nothing degrades silently). `recorded`, when set, is what the
    receipt keeps instead of the output (a fetched page: its address and size, not its text)."""

    exit_code: int
    output: str
    truncated: bool = False
    file_changes: dict[str, str | None] = field(default_factory=dict)
    provider: str | None = None
    fallback: str | None = None
    recorded: str | None = None
    change_id: str | None = None  # the applied change /undo can take back, if any


def file_digest(path: Path) -> str | None:
    """sha256 of a regular file (blocking: call it in a thread); None when it is not one."""
    if path.is_symlink() or not path.is_file():
        return None
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def bounded(text: str, limit: int = MAX_OUTPUT) -> tuple[str, bool]:
    """Keep the head and tail of long output."""
    if len(text) <= limit:
        return text, False
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - limit:,} characters cut] ...\n{text[-half:]}", True


class CommandRunner(Protocol):
    """Runs a shell-like command inside the workspace, refusing anything without a capability."""

    name: str

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Run exactly `action`; raise PolicyDenied if the capability does not match it."""
        ...
