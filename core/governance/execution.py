"""Runs governed actions through the tool fabric, with receipts: an intent on disk before
anything that may change something runs (write-ahead), the outcome after (durable for T2/T3)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.errors import NoToolAvailable, PolicyDenied, ToolFailed, ToolUnavailable
from core.governance.policy import PolicyEngine
from core.governance.rollback import RollbackJournal
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus, new_receipt_id
from core.receipts.registry import GovernanceReceipt
from core.runtime.stopping import effect_underway
from core.tools.action import ToolAction
from core.tools.base import CommandRunner, ToolResult

HIGH_RISK = ("T2", "T3")
READ_ONLY = "T0"  # the Soul's tier for what changes nothing: no intent needed
MAX_RECEIPT_OUTPUT = 2000
MAX_PARAM_CHARS = 500


@dataclass(frozen=True, slots=True)
class RunReport:
    """What one execution did: the tool's result (None when nothing ran), why not, the
    tool_run receipt's id, and the short text the owner sees (exit code and output)."""

    result: ToolResult | None
    error: str | None
    receipt_id: str
    text: str
    refused: bool = False  # governance or the provider refused at run time

    @property
    def exit_code(self) -> int | None:
        """The command's exit code, when it ran."""
        return self.result.exit_code if self.result is not None else None


@dataclass(frozen=True, slots=True)
class _Trace:
    """Where a run sits (quest, parent, approval) and what governance decided about it."""

    tier: str
    parent_id: str | None
    quest_id: str | None
    approval_id: str | None
    policy: Mapping[str, object] | None


def _bounded_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Parameters for the receipt: long text (a file's content, a patch) cut to its head."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        if isinstance(value, str) and len(value) > MAX_PARAM_CHARS:
            value = f"{value[:MAX_PARAM_CHARS]}... [{len(value):,} characters]"
        out[key] = value
    return out


def _policy(trace: _Trace) -> dict[str, object]:
    """The decision's snapshot for a receipt (naming the approval, when there was one)."""
    policy: dict[str, object] = (
        dict(trace.policy) if trace.policy is not None else {"tier": trace.tier}
    )
    if trace.approval_id is not None:
        policy.setdefault("approval_id", trace.approval_id)
    return policy


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
        policy: Mapping[str, object] | None = None,
    ) -> RunReport:
        """Run the action; report what it did (the text: exit code and output).

        `policy` is the decision's snapshot, recorded in the receipt (approved actions get
        one naming the approval when the caller has none).

        A T1 action is snapshotted first and verified afterwards (in the background); a T2 or
        T3 action first waits for the quest's verifications and does not run if one failed
        (its T1 steps are rolled back instead).
        """
        trace = _Trace(tier, parent_id, quest_id, approval_id, policy)
        if tier == READ_ONLY:  # changes nothing: a stop may cut it short
            return await self._execute(action, trace, capability)
        with effect_underway():  # a stop waits until this change is done and recorded
            return await self._execute(action, trace, capability)

    async def _execute(
        self, action: ToolAction, trace: _Trace, capability: str | None
    ) -> RunReport:
        tier, quest_id = trace.tier, trace.quest_id
        if tier in HIGH_RISK:
            rolled_back = await self.finish(quest_id)
            if rolled_back is not None:
                reason = f"an earlier step failed its check and was undone ({rolled_back})"
                receipt_id = await self._receipt(action, trace, None, reason, time.perf_counter())
                return RunReport(None, reason, receipt_id, f"Not run: {reason}.")
            await self._ledger.flush()  # everything before a risky step is on disk first
        snapshot = None
        if tier == "T1" and self._journal is not None:
            snapshot = await self._journal.snapshot(action, quest_id)
        outcome_id = new_receipt_id()
        if tier != READ_ONLY:
            await self._intend(action, trace, outcome_id)
        started = time.perf_counter()
        result: ToolResult | None
        error: str | None = None
        text = ""
        refused = False
        try:
            token = capability or self._policy.authorize_approved(action)
            result = await self._runner.run(action, token)
        except (PolicyDenied, PermissionError) as exc:
            result, error, text = None, str(exc), f"Refused by governance: {exc}"
            refused = True
        except NoToolAvailable as exc:
            result, error, text = None, str(exc), not_run_text(exc)
        except (ToolFailed, ToolUnavailable) as exc:
            result, error, text = None, str(exc), f"Failed: {exc}"
        if snapshot is not None and self._journal is not None:
            self._journal.verify_later(snapshot, result or ToolResult(1, error or ""))
        receipt_id = await self._receipt(action, trace, result, error, started, outcome_id)
        if result is not None:
            output = result.output.strip() or "(no output)"
            if result.fallback:  # never degrade silently: say which provider ran instead
                output += f"\n(ran on {result.provider}; skipped {result.fallback})"
            text = f"exit {result.exit_code}\n{output}"
        return RunReport(result, error, receipt_id, text, refused)

    async def finish(self, quest_id: str | None) -> str | None:
        """Wait for the quest's T1 verifications. None: all passed. Otherwise the quest's T1
        steps were rolled back, and this says which step failed and why."""
        if self._journal is None:
            return None
        return await self._journal.barrier(quest_id)

    async def _intend(self, action: ToolAction, trace: _Trace, outcome_id: str) -> None:
        """The intent receipt, committed before the action runs: what, why (the policy), on
        whose approval, and the id its outcome will have. A crash between the two leaves an
        intent without an outcome, reported as interrupted after the restart (intents.py)."""
        await self._ledger.append_durable(
            Receipt(
                action_type=GovernanceReceipt.TOOL_INTENT,
                action_name=action.capability,
                inputs={
                    "command": action.describe(),
                    "action_hash": action.digest,
                    "params": _bounded_params(action.params),
                },
                outputs={"outcome_id": outcome_id},
                status=ReceiptStatus.PENDING,
                parent_id=trace.parent_id,
                quest_id=trace.quest_id,
                metadata={
                    "tier": trace.tier,
                    "approval_id": trace.approval_id,
                    "policy": _policy(trace),
                },
            )
        )

    async def _receipt(
        self,
        action: ToolAction,
        trace: _Trace,
        result: ToolResult | None,
        error: str | None,
        started: float,
        receipt_id: str | None = None,
    ) -> str:
        """The ToolReceipt: capability, action, provider, inputs (the ledger redacts them),
        bounded outputs, the policy snapshot and the changed files with their hashes."""
        ok = result is not None and result.exit_code == 0
        provider = (result.provider if result else None) or self._runner.name
        receipt = Receipt(
            action_type=GovernanceReceipt.TOOL_RUN,
            action_name=action.capability,
            inputs={
                "command": action.describe(),
                "action_hash": action.digest,
                "params": _bounded_params(action.params),
            },
            outputs=(
                {
                    "exit_code": result.exit_code,
                    "output": (result.recorded or result.output)[:MAX_RECEIPT_OUTPUT],
                    "truncated": result.truncated or len(result.output) > MAX_RECEIPT_OUTPUT,
                    "file_changes": result.file_changes,
                    **({"change": result.change_id} if result.change_id else {}),
                    "provider": provider,
                    "fallback": result.fallback,
                }
                if result
                else None
            ),
            status=ReceiptStatus.SUCCESS if ok else ReceiptStatus.FAILURE,
            error_message=error,
            duration_ms=(time.perf_counter() - started) * 1000,
            parent_id=trace.parent_id,
            quest_id=trace.quest_id,
            metadata={
                "tier": trace.tier,
                "runner": provider,
                "provider": provider,
                "approval_id": trace.approval_id,
                "policy": _policy(trace),
            },
            id=receipt_id or new_receipt_id(),
        )
        if trace.tier in HIGH_RISK:
            await self._ledger.append_durable(receipt)
        else:
            self._ledger.append(receipt)
        return receipt.id


# What the owner knows each shell provider as.
PROVIDER_NAMES = {
    "docker": "the sandbox",
    "docker_dry_run": "the sandbox's dry run",
    "host": "this machine",
    "safe_repl": "the built-in shell",
}


def not_run_text(exc: NoToolAvailable) -> str:
    """Why nothing ran, provider by provider, in the owner's words, and where to look."""
    lines = ["Not run: nothing here can run it right now."]
    lines += [f"- {PROVIDER_NAMES.get(name, name)}: {why}" for name, why in exc.reasons]
    lines.append("`lancelot doctor` on the machine Lancelot runs on says what to fix.")
    return "\n".join(lines)
