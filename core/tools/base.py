"""The tool interface: run one governed action, given its capability token."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from core.governance.action import ToolAction

MAX_OUTPUT = 3500


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool run produced: exit code, bounded output, files changed (name -> sha256),
    and which runner ran it when a runner chooses between several."""

    exit_code: int
    output: str
    truncated: bool = False
    file_changes: dict[str, str | None] = field(default_factory=dict)
    runner: str = ""


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
