"""The tool-calling loop: model turn, validated and governed tool calls, repeat, bounded."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from core.agent.file_tools import addressed
from core.agent.flow_checks import FlowChecks
from core.agent.progress import tool_label
from core.agent.quest import Quest
from core.agent.tool_search import found_by
from core.agent.tools import ToolTable
from core.errors import LancelotError
from core.governance.gateway import ToolGateway
from core.governance.outcomes import ToolOutcome
from core.llm.types import CompletionRequest, Message, Role, ToolCall
from core.receipts.model import ReceiptStatus
from core.runtime.stopping import Stopped, stoppable

log = logging.getLogger(__name__)

UNEXPECTED = "the tool failed unexpectedly (the details are in Lancelot's log)"
WITHHELD = (
    "refused: an argument carries a secret (a key, token or password, maybe encoded); "
    "secrets never leave this machine"
)
WITHHELD_ARGUMENTS = "[withheld: they carried a secret]"  # what the receipt keeps instead


@dataclass
class LoopResult:
    """The model's last text, whether the iteration limit stopped it, and the tool outcomes."""

    text: str
    messages: list[Message]
    stopped: bool = False
    outcomes: list[ToolOutcome] = field(default_factory=list)


class ToolLoop:
    """Runs the model with tools until it answers without calling one, or the limit is hit."""

    def __init__(
        self, tools: ToolTable, gateway: ToolGateway | None, checks: FlowChecks | None = None
    ) -> None:
        self._tools = tools
        self._gateway = gateway
        self._checks = checks or FlowChecks()

    async def run(
        self, messages: list[Message], quest: Quest, *, task_type: str = "agent"
    ) -> LoopResult:
        """Drive one conversation; `messages` is extended in place with every turn."""
        result = LoopResult("", messages)
        while True:
            if quest.exhausted:
                result.stopped = quest.stopped = True
                return result
            quest.iterations += 1
            request = CompletionRequest(tuple(messages), tools=self._tools.specs(quest.found))
            completion = await quest.complete(request, task_type)
            messages.append(Message(Role.ASSISTANT, completion.text, completion.tool_calls))
            if not completion.tool_calls:
                result.text = completion.text
                return result
            for call in completion.tool_calls:
                content = await self._call(call, quest, result)
                messages.append(Message(Role.TOOL, content, tool_call_id=call.id, name=call.name))

    async def _call(self, call: ToolCall, quest: Quest, result: LoopResult) -> str:
        """Validate, then run under governance; always returns what the model is told."""
        tool = self._tools.get(call.name)
        args: dict[str, Any] = call.arguments if isinstance(call.arguments, dict) else {}
        if tool is None:
            return self._refuse(call, quest, "unknown tool", gap=True)
        problems = self._tools.problems(call.name, args)
        if problems:
            return self._refuse(call, quest, "invalid arguments", problems=problems)
        if self._gateway is None:
            return self._refuse(call, quest, "tools are off: governance (FEATURE_SOUL) is off")
        if self._checks.carries_secret(tool.flow, args):
            return self._refuse(call, quest, WITHHELD, arguments=WITHHELD_ARGUMENTS)
        call_id = quest.trail.record("tool_call", call.name, inputs={"arguments": args})
        quest.tools_used.append(call.name)
        if quest.progress is not None:
            quest.progress.tool(tool_label(call.name, args))
        ended = True  # not cut short by a stop (the progress then keeps the tool's name)
        try:
            action = addressed(tool.to_action(args), quest.channel)
            action, asks = self._checks.judge(action, tool.flow, quest.flow)
            # The owner's Stop cuts short a wait that changes nothing; a change under way
            # finishes first (core/runtime/stopping.py).
            outcome = await stoppable(
                self._gateway.run(
                    action,
                    via=quest.channel,
                    parent_id=call_id,
                    quest_id=quest.trail.quest_id,
                    asked=quest.asked,
                    ask=asks.ask,
                    ask_if_changes=asks.ask_if_changes,
                    key=quest.step_key(),
                    flow=quest.flow.labels,
                )
            )
        except Stopped:
            ended = False
            raise
        except LancelotError as exc:
            log.warning("tool %s failed: %s", call.name, exc)
            return self._failed(call, quest, call_id, exc.user_message, str(exc))
        except Exception as exc:  # a tool's bug is a failed call, never a dead turn
            log.exception("tool %s raised", call.name)
            detail = f"{type(exc).__name__}: {exc}"
            return self._failed(call, quest, call_id, UNEXPECTED, detail)
        finally:
            if ended and quest.progress is not None:
                quest.progress.tool_done()
        result.outcomes.append(outcome)
        quest.found.update(found_by(action, outcome))
        if outcome.output:
            quest.flow.observe(action, tool.flow, outcome.output)
        if outcome.receipt_id is not None:
            quest.run_receipts.append(outcome.receipt_id)
        return outcome.for_model()

    def _failed(self, call: ToolCall, quest: Quest, call_id: str, reason: str, detail: str) -> str:
        """The call failed before or while running: recorded, shown on the card, and told to
        the model so it can answer (or try another way)."""
        quest.trail.record(
            "tool_failed",
            call.name,
            outputs={"reason": reason},
            status=ReceiptStatus.FAILURE,
            parent_id=call_id,
            error=detail[:500],
        )
        quest.failures.append(f"{call.name}: {reason}")
        return json.dumps({"kind": "failed", "reason": reason}, ensure_ascii=False)

    def _refuse(
        self,
        call: ToolCall,
        quest: Quest,
        error: str,
        *,
        gap: bool = False,
        problems: list[str] | None = None,
        arguments: object = None,
    ) -> str:
        """Nothing runs; the model is told why (and, for a gap, what exists)."""
        body: dict[str, Any] = {"kind": "rejected", "error": error}
        if problems:
            body["problems"] = problems
        if gap:
            body["available_tools"] = [s.name for s in self._tools.specs(quest.found)]
        recorded = call.arguments if arguments is None else arguments
        parent = quest.trail.record(
            "tool_call",
            call.name,
            inputs={"arguments": recorded},
            outputs=body,
            status=ReceiptStatus.REFUSED,
        )
        if gap and quest.deep:
            quest.trail.record(
                "capability_gap",
                call.name,
                inputs={"arguments": call.arguments},
                outputs={"note": "the model asked for a tool Lancelot does not have"},
                status=ReceiptStatus.SKIPPED,
                parent_id=parent,
            )
        return json.dumps(body)
