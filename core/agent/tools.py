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
        for tool in tools:
            self.add(tool)

    def add(self, tool: AgentTool) -> None:
        """Register a tool; its schema is checked now, not at the first call."""
        Draft202012Validator.check_schema(tool.spec.parameters)
        self._tools[tool.spec.name] = tool
        self._validators[tool.spec.name] = Draft202012Validator(tool.spec.parameters)

    @classmethod
    def offered(cls, registry: ToolRegistry, setup: ToolSetup) -> ToolTable:
        """Every registered tool that `setup` switches on."""
        return cls(AgentTool.bound(d, setup) for d in registry.offered(setup))

    def get(self, name: str) -> AgentTool | None:
        """The tool called `name`, if there is one."""
        return self._tools.get(name)

    def specs(self) -> tuple[ToolSpec, ...]:
        """What the model is offered."""
        return tuple(t.spec for t in self._tools.values())

    def capabilities(self) -> dict[str, str]:
        """Tool name -> the capability its receipts carry (run_command -> shell.exec)."""
        return {name: tool.capability for name, tool in self._tools.items()}

    def targets(self, capability: str) -> tuple[str, ...]:
        """The parameters naming what a run of `capability` acted on (none if not offered)."""
        found = (t.flow.named() for t in self._tools.values() if t.capability == capability)
        return next(found, ())

    def problems(self, name: str, arguments: dict[str, Any]) -> list[str]:
        """Why `arguments` do not fit the tool's schema (empty: they do)."""
        validator = self._validators[name]
        found = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
        return [
            f"{'/'.join(str(p) for p in err.path) or '(arguments)'}: {err.message}"
            for err in found[:MAX_ERRORS]
        ]
