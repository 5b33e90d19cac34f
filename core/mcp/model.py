"""What the MCP layer tells the rest of Lancelot: a server's state, its tools, a call's result.

Frozen dataclasses with no SDK types in them, so a caller (the tool registry, `/mcp`, the CLI,
governance) never imports the `mcp` SDK to read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["connecting", "ready", "failed", "disabled"]


@dataclass(frozen=True, slots=True)
class ToolHints:
    """A tool's annotations as its server declared them; None where it said nothing (the
    spec's defaults are readOnly false, destructive true, idempotent false, openWorld true,
    and governance decides what an unsaid hint counts as)."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    def describe(self) -> str:
        """The hints a server gave, as `read-only, idempotent` (or `no hints`)."""
        said = [
            (name if value else f"not {name}")
            for name, value in (
                ("read-only", self.read_only),
                ("destructive", self.destructive),
                ("idempotent", self.idempotent),
                ("open-world", self.open_world),
            )
            if value is not None
        ]
        return ", ".join(said) or "no hints"


@dataclass(frozen=True, slots=True)
class ToolInfo:
    """One tool a server offers: its name, description, input schema and hints."""

    name: str
    description: str
    input_schema: dict[str, Any]
    hints: ToolHints = ToolHints()


@dataclass(frozen=True, slots=True)
class ServerState:
    """Where one server stands. `reason` says why it failed (one line, redacted);
    `failures` counts the failed starts since it was last ready for long; `retry_in` is the
    wait before the next start."""

    name: str
    transport: Literal["stdio", "http"]
    status: Status
    tools: tuple[ToolInfo, ...] = ()
    reason: str | None = None
    failures: int = 0
    retry_in: float | None = None
    delays: tuple[float, ...] = field(default=(), repr=False)  # the waits so far, in order

    def tool(self, name: str) -> ToolInfo | None:
        """The tool called `name`, if the server offers one."""
        return next((tool for tool in self.tools if tool.name == name), None)


@dataclass(frozen=True, slots=True)
class CallResult:
    """What one tool call gave back: its text (bounded), whether the tool said it failed or
    the call itself did (`error`), how long it took and how big the answer was."""

    server: str
    tool: str
    text: str
    duration_ms: float
    size: int  # characters of text the server sent, before any cut
    truncated: bool = False
    is_error: bool = False
    error: str | None = None  # the call failed (timeout, server gone, unknown tool)
    structured: Any = None  # the server's structuredContent, when it gave one

    @property
    def ok(self) -> bool:
        """The call went through and the tool did not report an error."""
        return self.error is None and not self.is_error
