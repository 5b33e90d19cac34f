"""The agent's flow checks: before a tool call is governed, what the request has read
decides whether it may go as the Soul's tier says, must ask the owner, or is refused.

The rules are the Soul's `flow_rules`; the labels and reasons are core/governance/flow.py's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from core.governance.flow import (
    RequestFlow,
    ask_if_it_changes,
    ask_to_change,
    ask_to_send,
)
from core.governance.sensitive import revealing
from core.memory.model import Provenance
from core.receipts.redaction import Redactor
from core.tools.action import ToolAction
from core.tools.definition import ANY_TARGET, ToolFlow
from soul.schema import FlowRules


@dataclass(frozen=True, slots=True)
class Asks:
    """Why the owner must decide: always (`ask`), or if a dry run shows a change."""

    ask: str | None = None
    ask_if_changes: str | None = None


class FlowChecks:
    """Judges one tool call against the request's flow and the Soul's flow rules."""

    def __init__(
        self,
        redactor: Redactor | None = None,
        rules: Callable[[], FlowRules] = FlowRules,
    ) -> None:
        """`redactor` knows the secrets' shapes (and the configured values); `rules` reads
        the active Soul's flow rules at each call (an amendment applies at once)."""
        self._redactor = redactor or Redactor()
        self._rules = rules

    def carries_secret(self, spec: ToolFlow, arguments: dict[str, object]) -> bool:
        """Whether a call of flow `spec` that sends its arguments out (or may change
        anything) would carry a secret in any form (raw, URL-encoded, base64, hex): such a
        call is refused, whoever asked."""
        if not spec.sends and ANY_TARGET not in spec.changes:
            return False
        return any(self._redactor.carries(text) for text in _strings(arguments))

    def judge(
        self, action: ToolAction, spec: ToolFlow, flow: RequestFlow
    ) -> tuple[ToolAction, Asks]:
        """The action (of flow `spec`) to govern (a remember marked with where its fact came
        from) and why the owner must decide, if they must."""
        rules = self._rules()
        if spec.remembers:
            held = rules.stranger_memory == "quarantine" and flow.read_strangers
            held = held and not flow.owner_named(str(action.params.get("text", "")))
            provenance = Provenance.TOOL if held else Provenance.AGENT
            params = {**action.params, "provenance": str(provenance)}
            return ToolAction(action.capability, action.command, params), Asks()
        ask = ask_to_send(action, spec, flow) if rules.private_egress == "ask" else None
        if ask is None and rules.stranger_changes == "ask":
            ask = ask_to_change(action, spec, flow)
        action, reads_sensitive = revealing(action)
        if reads_sensitive is not None:  # the card names the files the approved run may see
            ask = reads_sensitive if ask is None else f"{ask}\n\n{reads_sensitive}"
        by_effect = spec.changes_by_effect and rules.stranger_changes == "ask"
        command = action.command or ""
        return action, Asks(ask, ask_if_it_changes(flow, command) if by_effect else None)


def _strings(value: object) -> Iterator[str]:
    """Every string inside JSON-like arguments."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
