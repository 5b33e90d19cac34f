"""The tool registry: every tool definition, by name and by capability. The agent's table,
governance's default tiers and the tool router's own providers are read from it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from core.tools.definition import UNKNOWN, Provider, ToolDefinition, ToolFlow, ToolSetup
from soul.schema import Tier


class ToolRegistry:
    """Name -> definition. Open: a definition made at run time (an MCP server's tool) is
    added like a built-in one. A name, or a capability, is defined once."""

    def __init__(self, definitions: Iterable[ToolDefinition] = ()) -> None:
        self._by_name: dict[str, ToolDefinition] = {}
        self._by_capability: dict[str, ToolDefinition] = {}
        for definition in definitions:
            self.add(definition)

    def add(self, definition: ToolDefinition) -> None:
        """Register a definition; ValueError when its name or capability is taken."""
        if definition.name in self._by_name:
            raise ValueError(f"a tool named {definition.name!r} is already defined")
        taken = self._by_capability.get(definition.capability)
        if taken is not None:
            raise ValueError(f"capability {definition.capability!r} is already {taken.name!r}'s")
        self._by_name[definition.name] = definition
        self._by_capability[definition.capability] = definition

    def __iter__(self) -> Iterator[ToolDefinition]:
        return iter(self._by_name.values())

    def get(self, name: str) -> ToolDefinition | None:
        """The tool called `name`, if there is one."""
        return self._by_name.get(name)

    def defining(self, capability: str) -> ToolDefinition | None:
        """The tool whose capability this is, if a tool's."""
        return self._by_capability.get(capability)

    def flow_of(self, capability: str) -> ToolFlow:
        """The capability's flow; UNKNOWN's, the cautious one, when no tool defines it."""
        definition = self._by_capability.get(capability)
        return definition.flow if definition is not None else UNKNOWN

    def tier_of(self, capability: str) -> Tier | None:
        """The tier the capability's definition gives, for when the Soul has no rule for it."""
        definition = self._by_capability.get(capability)
        return definition.tier if definition is not None else None

    def offered(self, setup: ToolSetup) -> list[ToolDefinition]:
        """The tools the settings and wiring in `setup` switch on."""
        return [d for d in self if d.enabled(setup)]

    def providers(self, setup: ToolSetup) -> dict[Provider, frozenset[str]]:
        """Each provider the switched-on tools name, with the capabilities it serves."""
        served: dict[Provider, set[str]] = {}
        for definition in self.offered(setup):
            if definition.provider is not None:
                served.setdefault(definition.provider, set()).add(definition.capability)
        return {provider: frozenset(caps) for provider, caps in served.items()}
