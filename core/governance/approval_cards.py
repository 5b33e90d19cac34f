"""What an approval looks like to the owner: the pending card and the card after a decision."""

from __future__ import annotations

from core.events import Button, Card, CardKind
from core.governance.approvals import Approval, ApprovalState
from core.governance.flow import ASK_MARK
from core.mcp.naming import plain_call, split_capability
from core.security.owner_view import OwnerView

# What each kind of action does, in the owner's words (the capability id stays in receipts).
_DOES = {
    "shell.exec": "runs this command in your workspace",
    "file.write": "writes a file",
    "file.move": "moves a file",
    "file.delete": "deletes a file",
    "repo.commit": "makes a git commit",
    "repo.branch": "creates a git branch",
    "repo.checkout": "switches git branches",
    "repo.apply_patch": "applies a patch",
    "net.request": "sends a request to another server",
    "web.fetch": "reads a web page",
    "web.search": "sends a search query to the search provider",
    "memory.forget": "forgets a remembered fact",
    "memory.remember": "remembers a fact",
    "deploy": "deploys",
}
APPLY = "shell.apply"


def what_it_does(approval: Approval) -> str:
    """One paragraph: exactly what will happen, in the owner's words (and, when what the
    request read is why it asks, that reason with its source)."""
    if approval.reason.startswith(ASK_MARK):
        return f"{_what_it_does(approval, '.')}\n\n{approval.reason}"
    return _what_it_does(approval, ", and the Soul says to ask you first.")


def _what_it_does(approval: Approval, why: str) -> str:
    action = approval.action
    if action.capability == APPLY:
        summary = str(action.params.get("summary") or "changes files")
        return (
            f"$ {action.command}\n\nIt {summary}.\n\nThe command already ran in a copy of your "
            "workspace: Approve applies exactly these changes (nothing runs again), Deny drops "
            "them."
        )
    server_tool = split_capability(action.capability)
    if server_tool is not None:  # a server's tool: say which server does what, with what
        call = plain_call(*server_tool, action.params)
        return f"{call}.\n\nLancelot cannot undo what a server does{why}"
    does = _DOES.get(action.capability, "acts with your authority")
    if action.command is not None:
        return f"$ {action.command}\n\nThis {does}{why}"
    params = action.params
    target = params.get("path") or params.get("url") or params.get("query") or params.get("id")
    target = target or ""
    detail = f": {target}" if target else ""
    return f"This {does}{detail}{why}"


def pending_card(
    approval: Approval, buttons: tuple[Button, ...], owner: OwnerView, now: float
) -> Card:
    """What will happen to which files, until when the card is valid (in the owner's time),
    Approve and Deny. Tier names and capability ids are in the receipts, not here."""
    title = "Approve these changes?" if approval.action.capability == APPLY else "Approve this?"
    return Card(
        kind=CardKind.APPROVAL,
        title=title,
        body=what_it_does(approval),
        fields=(("Valid until", owner.until(approval.expires_at, now)),),
        buttons=buttons,
        correlation_id=approval.card_id,
    )


def outcome_card(
    approval: Approval,
    now: float,
    owner: OwnerView,
    note: str = "",
    buttons: tuple[Button, ...] = (),
    title: str | None = None,
) -> Card:
    """The card after a decision: who (the owner's name), when (their time), where, and
    what happened (Undo, when the change can still be taken back)."""
    state = approval.state
    action = approval.action
    lines = [f"$ {action.command}" if action.command is not None else what_it_does(approval)]
    if approval.decided_by:
        verb = "Approved" if state is not ApprovalState.DENIED else "Denied"
        when = owner.when(approval.decided_at or now, now)
        who = owner.who(approval.decided_by)
        lines.append(f"{verb} by {who} at {when} via {approval.decided_via}.")
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
        title=title or _outcome_title(approval),
        body="\n".join(lines),
        buttons=buttons,
        correlation_id=approval.card_id,
    )


def _outcome_title(approval: Approval) -> str:
    """The state in words: "Executed", "Not run", "Denied", ..."""
    return approval.state.value.replace("_", " ").capitalize()
