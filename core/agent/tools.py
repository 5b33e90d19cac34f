"""The tools the model may call: one table entry each, every one backed by governance."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from core.llm.types import ToolSpec
from core.tools.action import ToolAction
from core.tools.definition import ToolDefinition, ToolFlow, ToolSetup
from core.tools.tool_registry import ToolRegistry

MAX_ERRORS = 5


@dataclass(frozen=True, slots=True)
class AgentTool:
    """A model-facing tool: its spec, the governed capability it maps to, its flow, and how
    its (already validated) arguments become the exact ToolAction governance decides on."""

    spec: ToolSpec
    capability: str
    flow: ToolFlow
    to_action: Callable[[dict[str, Any]], ToolAction]

    @classmethod
    def bound(cls, definition: ToolDefinition, setup: ToolSetup) -> AgentTool:
        """The definition as offered under `setup`."""
        spec = ToolSpec(definition.name, definition.describe(setup.settings), definition.parameters)
        return cls(
            spec,
            definition.capability,
            definition.flow,
            lambda args: definition.action(setup, args),
        )


class ToolTable:
    """Name -> tool: what the model is offered in this install (docs/architecture.md, "How
    to add a tool")."""

    def __init__(self, tools: Iterable[AgentTool] = ()) -> None:
        self._tools: dict[str, AgentTool] = {}
        self._validators: dict[str, Draft202012Validator] = {}
        self._source: tuple[ToolRegistry, ToolSetup] | None = None
        self._seen = 0
        for tool in tools:
            self.add(tool)

    def add(self, tool: AgentTool) -> None:
        """Register a tool; its schema is checked now, not at the first call."""
        Draft202012Validator.check_schema(tool.spec.parameters)
        self._tools[tool.spec.name] = tool
        self._validators[tool.spec.name] = Draft202012Validator(tool.spec.parameters)

    @classmethod
    def offered(cls, registry: ToolRegistry, setup: ToolSetup) -> ToolTable:
        """Every registered tool that `setup` switches on, kept up to date: a tool added to
        or withdrawn from `registry` later (an MCP server's) is offered, or not, from the
        next model turn on."""
        table = cls()
        table._source = (registry, setup)
        table._refresh()
        return table

    def _refresh(self) -> None:
        """Rebuild from the registry when it changed since the last look."""
        if self._source is None or self._source[0].version == self._seen:
            return
        registry, setup = self._source
        self._tools.clear()
        self._validators.clear()
        for definition in registry.offered(setup):
            self.add(AgentTool.bound(definition, setup))
        self._seen = registry.version

    def get(self, name: str) -> AgentTool | None:
        """The tool called `name`, if there is one."""
        self._refresh()
        return self._tools.get(name)

    def specs(self) -> tuple[ToolSpec, ...]:
        """What the model is offered."""
        self._refresh()
        return tuple(t.spec for t in self._tools.values())

    def capabilities(self) -> dict[str, str]:
        """Tool name -> the capability its receipts carry (run_command -> shell.exec)."""
        self._refresh()
        return {name: tool.capability for name, tool in self._tools.items()}

    def targets(self, capability: str) -> tuple[str, ...]:
        """The parameters naming what a run of `capability` acted on (none if not offered)."""
        self._refresh()
        found = (t.flow.named() for t in self._tools.values() if t.capability == capability)
        return next(found, ())

    def problems(self, name: str, arguments: dict[str, Any]) -> list[str]:
        """Why `arguments` do not fit the tool's schema (empty: they do)."""
        self._refresh()
        validator = self._validators[name]
        found = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
        return [
            f"{'/'.join(str(p) for p in err.path) or '(arguments)'}: {err.message}"
            for err in found[:MAX_ERRORS]
        ]
