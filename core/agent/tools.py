"""The tools the model may call: one table entry each, every one backed by governance."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from core.llm.types import ToolSpec
from core.tools.action import ToolAction
from core.tools.definition import Offer, ToolDefinition, ToolFlow, ToolSetup
from core.tools.tool_registry import ToolRegistry

MAX_ERRORS = 5
CHARS_PER_TOKEN = 4  # English and JSON run 3.5 to 4.5 characters a token on GPT and Gemini
OFFER_ALL_UP_TO = 20  # on-demand tools offered directly (mcp.offer_all_up_to's default)


@dataclass(frozen=True, slots=True)
class AgentTool:
    """A model-facing tool: its spec, the governed capability it maps to, its flow, and how
    its (already validated) arguments become the exact ToolAction governance decides on."""

    spec: ToolSpec
    capability: str
    flow: ToolFlow
    to_action: Callable[[dict[str, Any]], ToolAction]
    offer: Offer = Offer.ALWAYS

    @classmethod
    def bound(cls, definition: ToolDefinition, setup: ToolSetup) -> AgentTool:
        """The definition as offered under `setup`."""
        spec = ToolSpec(definition.name, definition.describe(setup.settings), definition.parameters)
        return cls(
            spec,
            definition.capability,
            definition.flow,
            lambda args: definition.action(setup, args),
            definition.offer,
        )

    def shown(self, crowded: bool, found: Collection[str]) -> bool:
        """Whether the model sees this tool now: an on-demand one while the table is not
        crowded or once found, find_tools only while it is."""
        if self.offer is Offer.ON_DEMAND:
            return not crowded or self.spec.name in found
        if self.offer is Offer.WHEN_CROWDED:
            return crowded
        return True


class ToolTable:
    """Name -> tool: what the model is offered in this install (docs/architecture.md, "How
    to add a tool")."""

    def __init__(
        self, tools: Iterable[AgentTool] = (), offer_all_up_to: int = OFFER_ALL_UP_TO
    ) -> None:
        """`offer_all_up_to`: past this many on-demand tools (MCP servers'), the model is
        offered find_tools and the ones it found instead of them all."""
        self._offer_all_up_to = offer_all_up_to
        self._tools: dict[str, AgentTool] = {}
        self._validators: dict[str, Draft202012Validator] = {}
        self._source: tuple[ToolRegistry, ToolSetup] | None = None
        self._bound: dict[str, tuple[ToolDefinition, AgentTool, Draft202012Validator]] = {}
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
        table = cls(offer_all_up_to=setup.settings.mcp.offer_all_up_to)
        table._source = (registry, setup)
        table._refresh()
        return table

    def _refresh(self) -> None:
        """Rebuild from the registry when it changed since the last look. A definition
        checked its schema when it was made, and one seen before keeps its entry: with
        hundreds of MCP tools, binding them all again at each server's change would hold
        the event loop for seconds."""
        if self._source is None or self._source[0].version == self._seen:
            return
        registry, setup = self._source
        previous, self._bound = self._bound, {}
        self._tools.clear()
        self._validators.clear()
        for definition in registry.offered(setup):
            entry = previous.get(definition.name)
            if entry is None or entry[0] is not definition:
                tool = AgentTool.bound(definition, setup)
                entry = (definition, tool, Draft202012Validator(tool.spec.parameters))
            self._bound[definition.name] = entry
            self._tools[definition.name], self._validators[definition.name] = entry[1:]
        self._seen = registry.version

    def get(self, name: str) -> AgentTool | None:
        """The tool called `name`, if there is one."""
        self._refresh()
        return self._tools.get(name)

    def specs(self, found: Collection[str] = ()) -> tuple[ToolSpec, ...]:
        """What the model is offered: every tool while few are on demand; past
        `offer_all_up_to` of them, find_tools and, of those, only the ones in `found` (what
        this request's searches found)."""
        self._refresh()
        tools = self._tools.values()
        crowded = sum(t.offer is Offer.ON_DEMAND for t in tools) > self._offer_all_up_to
        return tuple(t.spec for t in tools if t.shown(crowded, found))

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


def estimated_tokens(specs: Iterable[ToolSpec]) -> int:
    """What `specs` add to a prompt, in tokens, estimated without a tokenizer: the characters
    of their JSON as an OpenAI-compatible request carries them, over CHARS_PER_TOKEN."""
    body = [
        {"type": "function", "function": {"name": s.name, "description": s.description,
                                          "parameters": s.parameters}}
        for s in specs
    ]  # fmt: skip
    return len(json.dumps(body, ensure_ascii=False)) // CHARS_PER_TOKEN
