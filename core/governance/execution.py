"""Runs governed actions through the tool fabric, with receipts; durable ones for T2/T3."""

from __future__ import annotations

import time

from core.errors import PolicyDenied, ToolFailed
from core.governance.action import ToolAction
from core.governance.policy import PolicyEngine
from core.governance.rollback import RollbackJournal
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.tools.base import CommandRunner, ToolResult

HIGH_RISK = ("T2", "T3")


class Executor:
    """The one path from a decision to a tool run."""

    def __init__(
        self,
        policy: PolicyEngine,
        runner: CommandRunner,
        ledger: ReceiptStore,
        journal: RollbackJournal | None = None,
    ) -> None:
        self._policy = policy
        self._runner = runner
        self._ledger = ledger
        self._journal = journal

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
        """Run the action; return a short text of the outcome (exit code and output).

        A T1 action is snapshotted first and verified afterwards (in the background); a T2 or
        T3 action first waits for the quest's verifications and does not run if one failed
        (its T1 steps are rolled back instead).
        """
        if tier in HIGH_RISK:
            rolled_back = await self.finish(quest_id)
            if rolled_back is not None:
                reason = f"an earlier step failed its check and was undone ({rolled_back})"
                await self._receipt(
                    action,
                    tier,
                    None,
                    reason,
                    time.perf_counter(),
                    parent_id,
                    quest_id,
                    approval_id,
                )
                return f"Not run: {reason}."
            await self._ledger.flush()  # everything before a risky step is on disk first
        snapshot = None
        if tier == "T1" and self._journal is not None:
            snapshot = await self._journal.snapshot(action, quest_id)
        started = time.perf_counter()
        result: ToolResult | None
        error: str | None = None
        text = ""
        try:
            token = capability or self._policy.authorize_approved(action)
            result = await self._runner.run(action, token)
        except (PolicyDenied, PermissionError) as exc:
            result, error, text = None, str(exc), f"Refused by governance: {exc}"
        except ToolFailed as exc:
            result, error, text = None, str(exc), f"Failed: {exc}"
        if snapshot is not None and self._journal is not None:
            self._journal.verify_later(snapshot, result or ToolResult(1, error or ""))
        await self._receipt(action, tier, result, error, started, parent_id, quest_id, approval_id)
        if result is None:
            return text
        output = result.output.strip() or "(no output)"
        return f"exit {result.exit_code}\n{output}"

    async def finish(self, quest_id: str | None) -> str | None:
        """Wait for the quest's T1 verifications. None: all passed. Otherwise the quest's T1
        steps were rolled back, and this says which step failed and why."""
        if self._journal is None:
            return None
        return await self._journal.barrier(quest_id)

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
            metadata={
                "tier": tier,
                "runner": (result.runner if result else "") or self._runner.name,
                "approval_id": approval_id,
            },
        )
        if tier in HIGH_RISK:
            await self._ledger.append_durable(receipt)
        else:
            self._ledger.append(receipt)
