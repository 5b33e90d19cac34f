"""find_tools: with more MCP tools on than a prompt should carry (`mcp.offer_all_up_to`), the
model is offered this search instead of them all; the tools it finds are offered from its
next turn on (core/agent/tools.py), each then governed like any other.

The search ranks the on-demand tools' names and descriptions against the query with BM25
(each tool's words kept; 500 tools rank in about 10 ms). What it finds is
decided when the call becomes an action, so the action, its receipt and the tools offered
next are the same list. The result is the descriptions the tool table would carry if
the tools were few, and carries no label, as they do there: a found tool's call is governed
exactly as it would be without the search (a server's description is fenced by its words,
"untrusted", in both places, core/agent/mcp_tools.py).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from core.config import Settings
from core.governance.outcomes import OutcomeKind, ToolOutcome
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.definition import NOTHING, Offer, ToolDefinition, ToolFlow, ToolSetup
from core.tools.tool_registry import ToolRegistry

FIND = "tools.find"
FIND_TOOLS = "find_tools"
DEFAULT_FOUND = 8
MAX_FOUND = 20
MAX_SHOWN = 300  # characters of one found tool's description the model is shown
K1, B = 1.2, 0.75  # BM25's usual term-saturation and length weights
_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SKIP = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it"}
    | {"of", "on", "or", "the", "to", "this", "with"}
)


def words(text: str) -> list[str]:
    """The words of `text` a search matches on: lower case, camelCase and snake_case split,
    the commonest English words left out."""
    return [w for w in _WORD.findall(_CAMEL.sub(" ", text).lower()) if w not in _SKIP]


def rank(query: str, documents: Sequence[Sequence[str]], limit: int) -> list[int]:
    """The indexes of the `limit` documents (lists of words) that match `query` best by
    BM25, best first; a document sharing no word with the query is never among them."""
    asked = set(words(query))
    if not asked or not documents:
        return []
    count = len(documents)
    average = sum(len(d) for d in documents) / count or 1.0
    holding = Counter(w for d in documents for w in set(d) if w in asked)
    scores: list[tuple[float, int]] = []
    for index, document in enumerate(documents):
        frequency = Counter(w for w in document if w in asked)
        score = 0.0
        for word, times in frequency.items():
            idf = math.log(1 + (count - holding[word] + 0.5) / (holding[word] + 0.5))
            norm = times + K1 * (1 - B + B * len(document) / average)
            score += idf * times * (K1 + 1) / norm
        if score > 0:
            scores.append((-score, index))
    return [index for _, index in sorted(scores)[:limit]]


class ToolIndex:
    """The on-demand tools of a registry, searchable; each tool's words are kept from its
    first search on (a definition is frozen: a tool made again is read again)."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._words: dict[str, tuple[ToolDefinition, list[str]]] = {}

    def search(self, setup: ToolSetup, query: str, limit: int) -> list[str]:
        """The names of the on-demand tools on now that match `query` best."""
        candidates = [d for d in self._registry.offered(setup) if d.offer is Offer.ON_DEMAND]
        documents = [self._document(d, setup) for d in candidates]
        return [candidates[i].name for i in rank(query, documents, limit)]

    def _document(self, definition: ToolDefinition, setup: ToolSetup) -> list[str]:
        """What a tool is searched by: its name (twice: a name says most) and description."""
        kept = self._words.get(definition.name)
        if kept is None or kept[0] is not definition:
            name = words(definition.name.replace("__", " "))
            kept = (definition, name + name + words(definition.describe(setup.settings)))
            self._words[definition.name] = kept
        return kept[1]


def _governed(setup: ToolSetup) -> bool:
    return setup.governed


def find_tools_definition(registry: ToolRegistry) -> ToolDefinition:
    """The find_tools tool over the on-demand tools `registry` holds."""

    index = ToolIndex(registry)

    def to_action(setup: ToolSetup, arguments: dict[str, Any]) -> ToolAction:
        query = str(arguments["query"])
        limit = int(arguments.get("limit", DEFAULT_FOUND))
        found = index.search(setup, query, limit)
        return ToolAction(FIND, None, {"query": query, "limit": limit, "found": found})

    return ToolDefinition(
        name=FIND_TOOLS,
        capability=FIND,
        description=(
            "Search the tools of the connected MCP servers (more than can be listed here) "
            "by what you need, in a few words: 'calendar events', 'send mail', 'git log'. "
            "The tools found can be called from your next turn on."
        ),
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 300},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_FOUND},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        flow=ToolFlow(NOTHING, targets=("query",)),
        tier="T0",
        enabled=_governed,
        to_action=to_action,
        offer=Offer.WHEN_CROWDED,
    )


def found_by(action: ToolAction, outcome: ToolOutcome) -> tuple[str, ...]:
    """The tools a find_tools run found, to offer from the next turn on (none for any other
    action, or a search that did not run)."""
    if action.capability != FIND or outcome.kind is not OutcomeKind.RAN:
        return ()
    return tuple(str(name) for name in action.params.get("found", ()))


class ToolFinder:
    """The provider of find_tools: tells the model what the search found, in the servers'
    own words (bounded), as governance allowed."""

    name = "tool_finder"

    def __init__(
        self, registry: ToolRegistry, settings: Settings, capabilities: CapabilityTokens
    ) -> None:
        self._registry = registry
        self._settings = settings
        self._capabilities = capabilities

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """List the tools the action found (those still on), each with its description."""
        self._capabilities.check(capability, action.digest)
        lines = []
        for name in action.params.get("found", ()):
            definition = self._registry.get(str(name))
            if definition is None or definition.offer is not Offer.ON_DEMAND:
                continue  # withdrawn since (its server went away, the owner turned it off)
            said = " ".join(definition.describe(self._settings).split())
            if len(said) > MAX_SHOWN:
                said = said[: MAX_SHOWN - 1] + "…"
            lines.append(f"- {definition.name}: {said}")
        if not lines:
            text = f"No tool matched {action.params.get('query')!r}; try other words."
            return ToolResult(0, text)
        head = f"{len(lines)} tools found; you can call them from your next turn on:"
        return ToolResult(0, "\n".join([head, *lines]))
