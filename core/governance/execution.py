"""Runs governed actions through the tool fabric, with receipts; durable ones for T2/T3."""

from __future__ import annotations

import time

from core.errors import PolicyDenied, ToolFailed
from core.governance.action import ToolAction
from core.governance.policy import PolicyEngine
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.tools.base import CommandRunner, ToolResult

HIGH_RISK = ("T2", "T3")


class Executor:
    """The one path from a decision to a tool run."""

    def __init__(self, policy: PolicyEngine, runner: CommandRunner, ledger: ReceiptStore) -> None:
        self._policy = policy
        self._runner = runner
        self._ledger = ledger

    async def execute(
        self,
        action: ToolAction,
        tier: str,
        *,
        capability: str | None = None,
        parent_id: str | None = None,
        quest_id: str | None = None,
        approval_id: str | None = None,
    ) -> str:
        """Run the action; return a short text of the outcome (exit code and output)."""
        if tier in HIGH_RISK:
            await self._ledger.flush()  # everything before a risky step is on disk first
        started = time.perf_counter()
        try:
            token = capability or self._policy.authorize_approved(action)
            result = await self._runner.run(action, token)
        except (PolicyDenied, PermissionError) as exc:
            await self._receipt(
                action, tier, None, str(exc), started, parent_id, quest_id, approval_id
            )
            return f"Refused by governance: {exc}"
        except ToolFailed as exc:
            await self._receipt(
                action, tier, None, str(exc), started, parent_id, quest_id, approval_id
            )
            return f"Failed: {exc}"
        await self._receipt(action, tier, result, None, started, parent_id, quest_id, approval_id)
        output = result.output.strip() or "(no output)"
        return f"exit {result.exit_code}\n{output}"

    async def _receipt(
        self,
        action: ToolAction,
        tier: str,
        result: ToolResult | None,
        error: str | None,
        started: float,
        parent_id: str | None,
        quest_id: str | None,
        approval_id: str | None,
    ) -> None:
        ok = result is not None and result.exit_code == 0
        receipt = Receipt(
            action_type="tool_run",
            action_name=action.capability,
            inputs={"command": action.describe(), "action_hash": action.digest},
            outputs=(
                {
                    "exit_code": result.exit_code,
                    "output": result.output[:2000],
                    "truncated": result.truncated,
                    "file_changes": result.file_changes,
                }
                if result
                else None
            ),
            status=ReceiptStatus.SUCCESS if ok else ReceiptStatus.FAILURE,
            error_message=error,
            duration_ms=(time.perf_counter() - started) * 1000,
            parent_id=parent_id,
            quest_id=quest_id,
            metadata={"tier": tier, "runner": self._runner.name, "approval_id": approval_id},
        )
        if tier in HIGH_RISK:
            await self._ledger.append_durable(receipt)
        else:
            self._ledger.append(receipt)
