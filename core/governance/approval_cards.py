"""What an approval looks like to the owner: the pending card and the card after a decision."""

from __future__ import annotations

from datetime import UTC, datetime

from core.events import Button, Card, CardKind
from core.governance.approvals import Approval, ApprovalState


def clock_text(ts: float) -> str:
    """A time as a phone shows it in a card: 14:05 UTC."""
    return datetime.fromtimestamp(ts, UTC).strftime("%H:%M UTC")


def pending_card(approval: Approval, buttons: tuple[Button, ...]) -> Card:
    """Exactly what will run, why it asks, when it lapses, and the Approve/Deny buttons."""
    return Card(
        kind=CardKind.APPROVAL,
        title=f"Approve this {approval.tier} action?",
        body=f"{approval.action.describe()}\n\n{approval.reason}",
        fields=(
            ("Runs", approval.action.capability),
            ("Expires", clock_text(approval.expires_at)),
        ),
        buttons=buttons,
        correlation_id=approval.card_id,
    )


def outcome_card(approval: Approval, now: float, note: str = "") -> Card:
    """The card after a decision: who, when, where, and what happened; no buttons."""
    state = approval.state
    lines = [approval.action.describe()]
    if approval.decided_by:
        verb = "Approved" if state is not ApprovalState.DENIED else "Denied"
        when = clock_text(approval.decided_at or now)
        lines.append(f"{verb} by {approval.decided_by} at {when} via {approval.decided_via}.")
    if state is ApprovalState.EXPIRED:
        lines.append("Expired: nobody decided in time, so nothing ran.")
    if state is ApprovalState.INTERRUPTED:
        lines.append("Lancelot stopped while this was running; it was not started again.")
    if approval.result:
        lines.append(approval.result)
    if note:
        lines.append(note)
    return Card(
        kind=CardKind.APPROVAL,
        title=f"{state.value.capitalize()}: {approval.tier} action",
        body="\n".join(lines),
        correlation_id=approval.card_id,
    )
