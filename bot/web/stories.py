"""The story of each request, for the receipt page: what was asked, what happened, how it ended.

A story is a root receipt (an owner's message, a scheduled run) and the receipts of its
quest. This turns one into lines a person reads on a phone: a preview of the request, the
policy decisions, each tool run with its command and exit code, each approval with its
decision and who decided on which channel, the reply.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from core.receipts.base import ReceiptStore, Story
from core.receipts.model import StoredReceipt

PREVIEW_CHARS = 80
DECISIONS = {
    "approval_granted": "approved",
    "approval_denied": "denied",
    "approval_expired": "expired",
}
HIDDEN = frozenset({"tool_intent", "reply", *DECISIONS})  # folded into other lines
JOB_KINDS = ("scheduled_job_run", "scheduled_job_failed", "scheduled_job_skipped")


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


def local_time(stamp: str, zone: tzinfo | None, now: datetime) -> str:
    """`14:03` today, `Mon 14:03` this week, `2026-03-01 14:03` before, in the owner's zone."""
    when = parse_time(stamp)
    if when is None:
        return stamp
    when, today = when.astimezone(zone), now.astimezone(zone)
    if when.date() == today.date():
        return when.strftime("%H:%M")
    if (today.date() - when.date()).days < 7:
        return when.strftime("%a %H:%M")
    return when.strftime("%Y-%m-%d %H:%M")


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


def preview(root: StoredReceipt) -> str:
    """The request in a few words: the message, the job, or the kind of record."""
    if root.action_type == "inbound":
        return _cut(_field(root.inputs, "text") or "(an empty message)")
    if root.action_type in JOB_KINDS:
        return f"scheduled job {root.action_name}"
    return f"{root.action_type.replace('_', ' ')}: {root.action_name}"


def story_view(
    story: Story,
    zone: tzinfo | None,
    deciders: Callable[[StoredReceipt], str],
    now: datetime | None = None,
) -> StoryView:
    """The page's view of one story; `deciders` says who decided an approval, and where."""
    now = now or datetime.now(UTC)
    members = story.members
    lines = tuple(_lines(members, deciders))
    return StoryView(
        root_id=story.root.id,
        seq=story.root.seq,
        local_time=local_time(story.root.timestamp, zone, now),
        relative_time=relative_time(story.root.timestamp, now),
        preview=preview(story.root),
        outcome=_outcome(story.root, members),
        status=_status(story.root, members),
        lines=lines,
        more=max(0, story.size - len(members)),
    )


def _lines(
    members: Sequence[StoredReceipt], deciders: Callable[[StoredReceipt], str]
) -> list[Line]:
    decisions = [m for m in members if m.action_type in DECISIONS]
    lines = []
    for member in members:
        if member.action_type in HIDDEN:
            continue
        if member.action_type == "approval_requested":
            decision = decisions.pop(0) if decisions else None
            lines.append(_approval(member, decision, deciders))
            continue
        lines.append(Line(member.status, _describe(member), member.id))
    lines.extend(_approval(None, d, deciders) for d in decisions)  # asked in another request
    return lines


def _approval(
    asked: StoredReceipt | None,
    decision: StoredReceipt | None,
    deciders: Callable[[StoredReceipt], str],
) -> Line:
    shown = asked or decision
    assert shown is not None
    what = _cut(_field(shown.inputs, "command") or shown.action_name, 60)
    if decision is None:
        return Line("pending", f"approval asked: {what}; waiting for your decision", shown.id)
    verdict = DECISIONS[decision.action_type]
    status = "success" if verdict == "approved" else "refused"
    by = deciders(decision)
    return Line(status, f"approval: {what}; {verdict}{by}", (asked or decision).id)


def _describe(receipt: StoredReceipt) -> str:
    kind, name = receipt.action_type, receipt.action_name
    if kind in ("tool_run", "dry_run"):
        command = _cut(_field(receipt.inputs, "command") or name, 60)
        code = _field(receipt.outputs, "exit_code")
        ran = "dry run" if kind == "dry_run" else "ran"
        return f"{ran}: {command}" + (f" (exit {code})" if code is not None else "")
    if kind == "policy_decision":
        tier = _field(receipt.metadata, "tier")
        return f"policy: {name.replace('_', ' ')}" + (f" ({tier})" if tier else "")
    if kind == "command":
        return f"command /{name}"
    if kind == "tool_interrupted":
        return f"interrupted: {name}"
    return f"{kind.replace('_', ' ')}: {name}"


def _outcome(root: StoredReceipt, members: Sequence[StoredReceipt]) -> str:
    """How it ended, in a few words: the last command's exit code, a wait, or the reply."""
    runs = [m for m in members if m.action_type == "tool_run"]
    if runs:
        code = _field(runs[-1].outputs, "exit_code")
        return f"exit {code}" if code is not None else runs[-1].status
    if _status(root, members) == "pending":
        return "waiting for your decision"
    verdict = _last_verdict(members)
    if verdict in ("denied", "expired"):
        return f"{verdict}: nothing ran"
    replies = [m for m in members if m.action_type == "reply"]
    if replies:
        return _cut(_field(replies[-1].outputs, "title") or "replied", 60)
    if root.error_message:
        return _cut(root.error_message, 60)
    return root.status


def _status(root: StoredReceipt, members: Sequence[StoredReceipt]) -> str:
    statuses = {m.status for m in (root, *members)}
    asked = sum(m.action_type == "approval_requested" for m in members)
    decided = sum(m.action_type in DECISIONS for m in members)
    for status in ("failure", "refused"):
        if status in statuses:
            return status
    if asked > decided:
        return "pending"
    # A decision's own receipt is a success (it was recorded); a no is not the request's.
    return "refused" if _last_verdict(members) in ("denied", "expired") else "success"


def _last_verdict(members: Sequence[StoredReceipt]) -> str | None:
    """The last approval decision in a request (approved, denied, expired), if any."""
    decisions = [m for m in members if m.action_type in DECISIONS]
    return DECISIONS[decisions[-1].action_type] if decisions else None


async def decided_by(
    ledger: ReceiptStore, stories: Sequence[Story]
) -> Callable[[StoredReceipt], str]:
    """Who decided each approval in `stories`, and on which channel: the press that led to
    the decision (its parent) says."""
    presses: dict[str, StoredReceipt] = {}
    for story in stories:
        for member in story.members:
            if member.action_type in DECISIONS and member.parent_id:
                press = await ledger.get(member.parent_id)
                if press is not None:
                    presses[member.id] = press

    def who(decision: StoredReceipt) -> str:
        press = presses.get(decision.id)
        if press is None:
            return " (on its own: it lapsed)" if decision.action_type == "approval_expired" else ""
        sender = _field(press.metadata, "sender_id")
        channel = _field(press.metadata, "channel")
        return f" by {sender} on {channel}" if sender and channel else ""

    return who
