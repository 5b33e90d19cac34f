"""The tools the model may call: one table entry each, every one backed by governance."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from core.governance.commands import SHELL, shell_action
from core.llm.types import ToolSpec
from core.tools.action import ToolAction
from core.tools.workspace import Workspace

MAX_ERRORS = 5


@dataclass(frozen=True, slots=True)
class AgentTool:
    """A model-facing tool: its spec, the governed capability it maps to, and how its
    (already validated) arguments become the exact ToolAction governance decides on."""

    spec: ToolSpec
    capability: str
    to_action: Callable[[dict[str, Any]], ToolAction]


class ToolTable:
    """Name -> tool. Adding a tool is one `AgentTool` entry (core/agent/workspace_tools.py)."""

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

    def get(self, name: str) -> AgentTool | None:
        """The tool called `name`, if there is one."""
        return self._tools.get(name)

    def specs(self) -> tuple[ToolSpec, ...]:
        """What the model is offered."""
        return tuple(t.spec for t in self._tools.values())

    def capabilities(self) -> dict[str, str]:
        """Tool name -> the capability its receipts carry (run_command -> shell.exec)."""
        return {name: tool.capability for name, tool in self._tools.items()}

    def problems(self, name: str, arguments: dict[str, Any]) -> list[str]:
        """Why `arguments` do not fit the tool's schema (empty: they do)."""
        validator = self._validators[name]
        found = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
        return [
            f"{'/'.join(str(p) for p in err.path) or '(arguments)'}: {err.message}"
            for err in found[:MAX_ERRORS]
        ]


def run_command_tool(workspace: Workspace) -> AgentTool:
    """`run_command`: one command line in the workspace, exactly as /run runs it."""
    spec = ToolSpec(
        name="run_command",
        description=(
            "Run one command line in the owner's workspace (/workspace), under governance. "
            "Reads run at once; destructive commands (rm, mv over a file, git push) wait for "
            "the owner's approval; denylisted commands are refused with the rule and safer "
            "alternatives. No pipes, redirects or substitutions."
        ),
        parameters={
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 2000,
                    "description": "The exact command line, e.g. 'ls -la /workspace'.",
                }
            },
            "required": ["command"],
            "additionalProperties": False,
        },
    )
    return AgentTool(spec, SHELL, lambda args: shell_action(str(args["command"]), workspace))
