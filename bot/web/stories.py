"""The story of each request, for the receipt page: what was asked, what happened, how it ended.

A story is a root receipt (an owner's message, a scheduled run) and the receipts of its
quest, with the undos of the changes it made. This turns one into lines a person reads on a
phone: a preview of the request, the policy decisions, each tool run with its command and
exit code, each approval with its decision and who decided on which channel, each undo.
What a receipt is to the story is its kind's role, in core/receipts/registry.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from core.clock import spoken_time
from core.receipts.base import ReceiptStore, Story
from core.receipts.kinds import KindRegistry, ReceiptKind, Role
from core.receipts.model import StoredReceipt
from core.receipts.registry import KINDS, GovernanceReceipt

PREVIEW_CHARS = 80
# The verdicts the page words differently (core/receipts/registry.py gives each decision's).
APPROVED = KINDS.get(GovernanceReceipt.APPROVAL_GRANTED).verdict
EXPIRED = KINDS.get(GovernanceReceipt.APPROVAL_EXPIRED).verdict


@dataclass(frozen=True, slots=True)
class Line:
    """One thing that happened in a request."""

    status: str
    text: str
    receipt_id: str


@dataclass(frozen=True, slots=True)
class StoryView:
    """A request as the page shows it."""

    root_id: str
    seq: int
    local_time: str
    relative_time: str
    preview: str
    outcome: str
    status: str
    lines: tuple[Line, ...]
    more: int  # receipts of the request not shown here
    decisions: int = 0  # policy decisions among those shown: the page offers their replay


def _json(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _field(raw: str, key: str) -> Any:
    value = _json(raw)
    return value.get(key) if isinstance(value, dict) else None


def _cut(text: object, limit: int = PREVIEW_CHARS) -> str:
    words = " ".join(str(text).split())
    return words if len(words) <= limit else words[: limit - 1] + "…"


def parse_time(stamp: str) -> datetime | None:
    """A ledger timestamp (UTC, ISO 8601) as an aware datetime."""
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def local_time(stamp: str, zone: tzinfo, now: datetime) -> str:
    """A ledger timestamp as the owner reads it, in their zone (core.clock.spoken_time:
    `14:03`, `yesterday 18:04`, `Mon 30 Nov 14:03`)."""
    when = parse_time(stamp)
    if when is None:
        return stamp
    return spoken_time(when.timestamp(), zone, now.timestamp())


def relative_time(stamp: str, now: datetime) -> str:
    """`just now`, `5 min ago`, `3 h ago`, `2 days ago`."""
    when = parse_time(stamp)
    if when is None:
        return ""
    seconds = (now - when).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    days = int(seconds // 86400)
    return f"{days} day{'s' if days != 1 else ''} ago"


def preview(root: StoredReceipt, kinds: KindRegistry = KINDS) -> str:
    """The request in a few words: the message, the job, or the kind of record."""
    kind = kinds.get(root.action_type)
    if kind.role is Role.REQUEST:
        text = _field(root.inputs, "text")
        if text is not None:
            return _cut(text) or "(an empty message)"
    return _shown(kind, root.action_name)


def _shown(kind: ReceiptKind, subject: str) -> str:
    return kind.shown_as.replace("{subject}", subject)


def story_view(
    story: Story,
    zone: tzinfo,
    deciders: Callable[[StoredReceipt], str],
    now: datetime | None = None,
    kinds: KindRegistry = KINDS,
) -> StoryView:
    """The page's view of one story; `deciders` says who decided an approval, and where."""
    now = now or datetime.now(UTC)
    members = story.members
    roles = _Roles(kinds)
    return StoryView(
        root_id=story.root.id,
        seq=story.root.seq,
        local_time=local_time(story.root.timestamp, zone, now),
        relative_time=relative_time(story.root.timestamp, now),
        preview=preview(story.root, kinds),
        outcome=_outcome(story.root, members, roles),
        status=_status(story.root, members, roles),
        lines=tuple(_lines(members, deciders, roles)),
        more=max(0, story.size - len(members)),
        decisions=sum(m.action_type == GovernanceReceipt.POLICY_DECISION for m in members),
    )


class _Roles:
    """The registry's answers about one story's receipts."""

    def __init__(self, kinds: KindRegistry) -> None:
        self.kinds = kinds

    def of(self, receipt: StoredReceipt) -> Role:
        """The role of the receipt's kind."""
        return self.kinds.get(receipt.action_type).role

    def verdict(self, receipt: StoredReceipt) -> str | None:
        """approved, denied, expired...: the owner's answer this receipt records, if any."""
        return self.kinds.get(receipt.action_type).verdict

    def playing(self, role: Role, members: Sequence[StoredReceipt]) -> list[StoredReceipt]:
        """Those of `members` whose kind plays `role`, in order."""
        return [m for m in members if self.of(m) is role]

    def verdicts(self, members: Sequence[StoredReceipt]) -> list[StoredReceipt]:
        """Those of `members` that record the owner's answer to an approval, in order."""
        return [m for m in members if self.verdict(m)]


def _lines(
    members: Sequence[StoredReceipt], deciders: Callable[[StoredReceipt], str], roles: _Roles
) -> list[Line]:
    decisions = roles.verdicts(members)
    lines = []
    for member in members:
        role = roles.of(member)
        if role in (Role.HIDDEN, Role.ANSWER, Role.PRESS) or roles.verdict(member):
            continue
        if role is Role.ASK:
            decision = decisions.pop(0) if decisions else None
            lines.append(_approval(member, decision, deciders, roles))
            continue
        kind = roles.kinds.get(member.action_type)
        lines.append(Line(member.status, _describe(member, kind), member.id))
    lines.extend(_approval(None, d, deciders, roles) for d in decisions)  # asked elsewhere
    return lines


def _approval(
    asked: StoredReceipt | None,
    decision: StoredReceipt | None,
    deciders: Callable[[StoredReceipt], str],
    roles: _Roles,
) -> Line:
    shown = asked or decision
    assert shown is not None
    what = _cut(_field(shown.inputs, "command") or shown.action_name, 60)
    if decision is None:
        return Line("pending", f"approval asked: {what}; waiting for your decision", shown.id)
    verdict = roles.verdict(decision)
    status = "success" if verdict == APPROVED else "refused"
    by = deciders(decision)
    return Line(status, f"approval: {what}; {verdict}{by}", (asked or decision).id)


def _describe(receipt: StoredReceipt, kind: ReceiptKind) -> str:
    """A decision names its rule and tier, an undo what it put back, anything else its
    command (or action) and exit code."""
    name = receipt.action_name
    if kind.role is Role.DECISION:
        tier = _field(receipt.metadata, "tier")
        return _shown(kind, name.replace("_", " ")) + (f" ({tier})" if tier else "")
    if kind.role is Role.UNDO:
        return _shown(kind, _cut(_field(receipt.outputs, "outcome") or name, 60))
    code = _field(receipt.outputs, "exit_code")
    text = _shown(kind, _cut(_field(receipt.inputs, "command") or name, 60))
    return text + (f" (exit {code})" if code is not None else "")


def _outcome(root: StoredReceipt, members: Sequence[StoredReceipt], roles: _Roles) -> str:
    """How it ended, in a few words: undone, the last command's exit code, a wait, or the
    reply."""
    undos = roles.playing(Role.UNDO, members)
    if undos and undos[-1].status == "success":
        return "undone"
    runs = roles.playing(Role.EFFECT, members)
    if runs:
        code = _field(runs[-1].outputs, "exit_code")
        return f"exit {code}" if code is not None else runs[-1].status
    if _status(root, members, roles) == "pending":
        return "waiting for your decision"
    verdict = _last_verdict(members, roles)
    if verdict is not None and verdict != APPROVED:
        return f"{verdict}: nothing ran"
    replies = roles.playing(Role.ANSWER, members)
    if replies:
        return _cut(_field(replies[-1].outputs, "title") or "replied", 60)
    if root.error_message:
        return _cut(root.error_message, 60)
    return root.status


UNSERVED = "agent_reply"  # skipped: the agent had no model to answer with (core/agent/offline.py)


def _status(root: StoredReceipt, members: Sequence[StoredReceipt], roles: _Roles) -> str:
    # An undo refused later is a line of its own; the request itself did what it did.
    statuses = {m.status for m in (root, *members) if roles.of(m) is not Role.UNDO}
    asked = len(roles.playing(Role.ASK, members))
    decided = len(roles.verdicts(members))
    for status in ("failure", "refused"):
        if status in statuses:
            return status
    if any(m.action_type == UNSERVED and m.status == "skipped" for m in members):
        return "skipped"  # no model could answer: the request was not served
    if asked > decided:
        return "pending"
    # A decision's own receipt is a success (it was recorded); a no is not the request's.
    verdict = _last_verdict(members, roles)
    return "refused" if verdict is not None and verdict != APPROVED else "success"


def _last_verdict(members: Sequence[StoredReceipt], roles: _Roles) -> str | None:
    """The last approval decision in a request (approved, denied, expired), if any."""
    decisions = roles.verdicts(members)
    return roles.verdict(decisions[-1]) if decisions else None


async def decided_by(
    ledger: ReceiptStore,
    stories: Sequence[Story],
    kinds: KindRegistry = KINDS,
    named: Callable[[str], str] = str,
) -> Callable[[StoredReceipt], str]:
    """Who decided each approval in `stories` (`named`: the owner's name for a sender id),
    and on which channel: the press that led to the decision (its parent) says. A decision
    no press made says why (it lapsed, a Stop withdrew it)."""
    roles = _Roles(kinds)
    presses: dict[str, StoredReceipt] = {}
    for story in stories:
        for member in roles.verdicts(story.members):
            if member.parent_id:
                press = await ledger.get(member.parent_id)
                if press is not None:
                    presses[member.id] = press

    def who(decision: StoredReceipt) -> str:
        press = presses.get(decision.id)
        if press is None:
            if roles.verdict(decision) == EXPIRED:
                return " (on its own: it lapsed)"
            why = _field(decision.outputs, "outcome")
            return f" ({_cut(why, 60)})" if why else ""
        sender = _field(press.metadata, "sender_id")
        channel = _field(press.metadata, "channel")
        return f" by {named(sender)} on {channel}" if sender and channel else ""

    return who
