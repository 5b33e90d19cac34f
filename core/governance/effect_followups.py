"""What an approval of a dry run's effects adds to the approval flow: its outcome card offers
Undo while the change can be taken back, or Dry run again when the workspace changed under
it; a denied or lapsed card drops the kept dry run."""

from __future__ import annotations

from core.events import Button
from core.governance.approvals import Approval, ApprovalState
from core.governance.by_effect import APPLY, RERUN, DryRuns
from core.governance.undo import UndoDesk
from core.security.tokens import ActionTokens


class EffectFollowUps:
    """The dry-run side of approvals (approval_delivery and approval_transitions call it)."""

    def __init__(self, dry_runs: DryRuns, undo: UndoDesk, tokens: ActionTokens) -> None:
        self._dry_runs = dry_runs
        self._undo = undo
        self._tokens = tokens

    async def outcome_buttons(self, approval: Approval) -> tuple[tuple[Button, ...], str | None]:
        """Buttons for the card after an executed apply, and a title when it says more than
        the state does ("Not applied": the workspace changed, nothing was applied stale)."""
        action = approval.action
        finished = (ApprovalState.EXECUTED, ApprovalState.NOT_RUN)
        if approval.state not in finished or action.capability != APPLY:
            return (), None
        dry_run_id = str(action.params.get("dry_run"))
        undo = await self._undo.button(dry_run_id, approval.card_id)
        if undo is not None:
            return (undo,), None
        if not await self._dry_runs.stale(dry_run_id):
            return (), None
        payload = {"command": action.command, "dry_run": dry_run_id}
        token = await self._tokens.issue(RERUN, payload, approval.card_id)
        return (Button("Dry run again", token),), "Not applied"

    async def drop(self, approval: Approval) -> bool:
        """Discard the dry run a denied or lapsed approval kept; whether there was one."""
        action = approval.action
        if action.capability != APPLY:
            return False
        await self._dry_runs.discard(str(action.params.get("dry_run", "")))
        return True
