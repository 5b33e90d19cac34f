"""One tool, defined once: its name, capability, schema, flow, default tier, the settings that
enable it and how to reach its provider. Everything else (the agent's table, the flow checks,
the honesty gate, governance's default tier, the tool router) reads it from here.

A definition may be made at run time (an MCP server's tool, `mcp__<server>__<tool>`): it is
data, not an enum, and is checked when it is made.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from core.config import Settings
from core.features import FeatureFlags
from core.tools.action import ToolAction
from core.tools.base import CommandRunner
from core.tools.capability import CapabilityTokens
from core.tools.workspace import Workspace
from soul.schema import TIERS, Tier

ANY_TARGET = "*"  # in `changes`: the tool may change anything, named or not
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what every provider's API accepts as a name


class Label(StrEnum):
    """Where a piece of the model's context came from."""

    OWNER = "owner"  # the owner's own message
    PRIVATE = "private"  # workspace files, memory, command output over them
    STRANGER = "strangers"  # pages, search results, files and transcripts from outside


NOTHING: frozenset[Label] = frozenset()
PRIVATE = frozenset({Label.PRIVATE})
STRANGERS = frozenset({Label.STRANGER})
# A workspace file is the owner's private data, and its words may be anyone's (a cloned
# repository, a download, a document someone sent): both labels, whatever its name.
CONTENTS = frozenset({Label.PRIVATE, Label.STRANGER})


@dataclass(frozen=True, slots=True)
class ToolFlow:
    """What one tool reads and what it sends or changes.

    `reads` gives the labels its output carries; `sends` names the parameters whose values
    leave the machine; `changes` the parameters naming what it changes (empty: it changes
    nothing it can name; `*`: anything); `targets` the parameters naming what it acts on, as
    receipts and replies show it (defaults to `sends` and `changes`); `changes_by_effect`:
    what it changes is only known from a dry run (the shell); `remembers`: it keeps a fact.
    """

    reads: frozenset[Label]
    sends: tuple[str, ...] = ()
    changes: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    changes_by_effect: bool = False
    remembers: bool = False

    def named(self) -> tuple[str, ...]:
        """The parameters that name what a run acted on."""
        found = (*self.targets, *self.sends, *self.changes)
        return tuple(n for n in dict.fromkeys(found) if n != ANY_TARGET)


# The flow of a capability nothing defines (a skill's): the most cautious one, its output a
# stranger's, and it may change anything.
UNKNOWN = ToolFlow(STRANGERS, changes=(ANY_TARGET,))


@dataclass(frozen=True, slots=True)
class ToolSetup:
    """What decides which tools are offered and how their calls become actions."""

    settings: Settings
    workspace: Workspace
    governed: bool = True  # governance is on (FEATURE_SOUL): tools that need it may be offered
    remembers: bool = True  # memory is wired: the memory tools may be offered


@dataclass(frozen=True, slots=True)
class ProviderKit:
    """What a provider is built from."""

    settings: Settings
    features: FeatureFlags
    workspace: Workspace
    capabilities: CapabilityTokens


@dataclass(frozen=True, slots=True)
class Provider:
    """How a tool's provider is built and routed. Definitions that share one Provider share
    one provider object, registered once for all their capabilities. `local`: it runs only in
    the workspace (no network), so safe mode keeps it."""

    build: Callable[[ProviderKit], CommandRunner]
    local: bool = False
    priority: int = 0


def _always(_: ToolSetup) -> bool:
    return True


class Offer(StrEnum):
    """When the model is offered a tool. Hundreds of MCP tools would fill every prompt with
    their schemas, so past `mcp.offer_all_up_to` of them the model finds the ones it needs."""

    ALWAYS = "always"
    ON_DEMAND = "on demand"  # offered while few are on, else once find_tools found it
    WHEN_CROWDED = "when crowded"  # find_tools: offered only while the others are not


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A model-facing tool. `description` may depend on the settings (web_fetch names the
    hosts allowed); `to_action` turns validated arguments into the exact action governance
    decides on (default: the arguments as the action's parameters); `provider` is None when
    a shared provider serves the capability (the shell, files, memory, the scheduler)."""

    name: str
    capability: str
    description: str | Callable[[Settings], str]
    parameters: dict[str, Any]
    flow: ToolFlow
    tier: Tier
    enabled: Callable[[ToolSetup], bool] = _always
    to_action: Callable[[ToolSetup, dict[str, Any]], ToolAction] | None = None
    provider: Provider | None = None
    offer: Offer = Offer.ALWAYS

    def __post_init__(self) -> None:
        problems = definition_problems(self)
        if problems:
            raise ValueError(f"tool {self.name!r}: " + "; ".join(problems))

    def describe(self, settings: Settings) -> str:
        """What the model is told about the tool."""
        text = self.description
        return text if isinstance(text, str) else text(settings)

    def action(self, setup: ToolSetup, arguments: dict[str, Any]) -> ToolAction:
        """The action a call with these (schema-checked) arguments asks for."""
        if self.to_action is not None:
            return self.to_action(setup, arguments)
        return ToolAction(self.capability, None, dict(arguments))


def definition_problems(definition: ToolDefinition) -> list[str]:
    """Why a definition cannot be used (empty: it can): a bad name, schema or tier, or a
    flow that names a parameter the schema does not have."""
    problems = []
    if not _NAME.fullmatch(definition.name):
        problems.append("a name is 1 to 64 letters, digits, '_' or '-'")
    if not definition.capability.strip():
        problems.append("it names no capability")
    if definition.tier not in TIERS:
        problems.append(f"tier {definition.tier!r} is none of {', '.join(TIERS)}")
    flow: object = definition.flow  # a definition made at run time may lack one
    if not isinstance(flow, ToolFlow):
        return [*problems, "it declares no flow (what its output carries, sends, changes)"]
    try:
        Draft202012Validator.check_schema(definition.parameters)
    except SchemaError as exc:
        return [*problems, f"its parameters are no JSON schema: {exc.message}"]
    known = set(definition.parameters.get("properties", {}))
    unknown = [n for n in (*flow.sends, *flow.changes, *flow.targets) if n not in known]
    unknown = [n for n in unknown if n != ANY_TARGET]
    if unknown:
        problems.append(f"its flow names {', '.join(unknown)}, which its schema does not have")
    return problems
