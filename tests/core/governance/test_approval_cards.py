"""What the owner reads on an approval card: exactly what will happen, in their words, until
when they can decide; and after the decision, who decided, when, where, and what came of it.
Tier names and capability ids stay in the receipts."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

from core.events import Button, CardKind
from core.governance.approval_cards import outcome_card, pending_card, what_it_does
from core.governance.approvals import Approval, ApprovalState
from core.governance.flow import ASK_MARK
from core.security.owner_view import OwnerView
from core.tools.action import ToolAction

NOW = datetime(2026, 11, 28, 14, 5, tzinfo=UTC).timestamp()
SOUL_ASKS = ", and the Soul says to ask you first."


def approval(
    capability: str = "shell.exec",
    command: str | None = "rm -r old",
    params: dict[str, Any] | None = None,
    **changes: Any,
) -> Approval:
    action = ToolAction(capability, command, params or {})
    made = Approval(
        id="ap1", action=action, action_hash=action.digest, tier="T3", reason="T3 rule",
        card_id="card1", state=ApprovalState.PENDING, requested_via="telegram", quest_id=None,
        created_at=NOW, expires_at=NOW + 3600, decided_at=None, decided_by=None,
        decided_via=None, finished_at=None, result=None,
    )  # fmt: skip
    return dataclasses.replace(made, **changes)


def owner(name: str | None = None) -> OwnerView:
    view = OwnerView("UTC", now=lambda: NOW)
    view.follow(zone=lambda: None, name=lambda: name)
    return view


def test_a_command_is_shown_as_it_will_run_with_why_it_asks() -> None:
    assert what_it_does(approval()) == (
        "$ rm -r old\n\nThis runs this command in your workspace" + SOUL_ASKS
    )


def test_an_action_without_a_command_names_its_target() -> None:
    for params, shown in [
        ({"path": "notes/a.md"}, "notes/a.md"),
        ({"url": "https://example.org/x"}, "https://example.org/x"),
        ({"query": "weather"}, "weather"),
        ({"id": "f12"}, "f12"),
    ]:
        text = what_it_does(approval("file.delete", None, params))
        assert text == f"This deletes a file: {shown}" + SOUL_ASKS


def test_the_target_named_first_wins_and_none_is_left_out() -> None:
    both = approval("file.move", None, {"path": "a", "url": "u", "query": "q", "id": "i"})
    assert what_it_does(both) == "This moves a file: a" + SOUL_ASKS
    assert what_it_does(approval("file.move", None, {})) == "This moves a file" + SOUL_ASKS
    assert what_it_does(approval("file.move", None, {"path": ""})) == (
        "This moves a file" + SOUL_ASKS
    )


def test_an_unknown_capability_acts_with_the_owners_authority() -> None:
    assert what_it_does(approval("calendar.invite", None, {})) == (
        "This acts with your authority" + SOUL_ASKS
    )


def test_applying_a_dry_run_says_nothing_runs_again() -> None:
    kept = approval("shell.apply", "rm -r old", {"summary": "deletes 3 files in old/"})
    assert what_it_does(kept) == (
        "$ rm -r old\n\nIt deletes 3 files in old/.\n\nThe command already ran in a copy of "
        "your workspace: Approve applies exactly these changes (nothing runs again), Deny "
        "drops them."
    )
    unsaid = approval("shell.apply", "touch x", {})
    assert what_it_does(unsaid).startswith("$ touch x\n\nIt changes files.\n\n")


def test_a_servers_tool_says_which_server_does_what_and_that_it_cannot_be_undone() -> None:
    call = approval("mcp.github.create_issue", None, {"title": "Bug"})
    assert what_it_does(call) == (
        "MCP server github runs its tool create_issue with:\ntitle = Bug.\n\n"
        "Lancelot cannot undo what a server does" + SOUL_ASKS
    )


def test_a_reason_from_what_was_read_is_shown_with_its_source() -> None:
    reason = f"{ASK_MARK}it read https://example.org/page"
    asked = approval(reason=reason)
    assert what_it_does(asked) == (
        f"$ rm -r old\n\nThis runs this command in your workspace.\n\n{reason}"
    )


def test_the_pending_card_asks_until_its_deadline_with_its_buttons() -> None:
    buttons = (Button("Approve", "a:1"), Button("Deny", "d:1"))
    card = pending_card(approval(), buttons, owner(), NOW)
    assert card.kind is CardKind.APPROVAL
    assert card.title == "Approve this?"
    assert card.body == what_it_does(approval())
    assert card.fields == (("Valid until", "15:05 (in 1 h)"),)
    assert card.buttons == buttons
    assert card.correlation_id == "card1"
    kept = approval("shell.apply", "rm x", {"summary": "deletes x"})
    assert pending_card(kept, buttons, owner(), NOW).title == "Approve these changes?"


def test_the_outcome_names_who_decided_when_and_where() -> None:
    done = approval(
        state=ApprovalState.EXECUTED, decided_at=NOW - 60, decided_by="4242",
        decided_via="telegram", result="exit 0",
    )  # fmt: skip
    card = outcome_card(done, NOW, owner("Ada"), note="Undo within 24 h.")
    assert card.title == "Executed"
    assert card.body == (
        "$ rm -r old\nApproved by Ada at 14:04 via telegram.\nexit 0\nUndo within 24 h."
    )
    assert card.correlation_id == "card1"
    assert outcome_card(done, NOW, owner()).body.splitlines()[1] == (
        "Approved by 4242 at 14:04 via telegram."
    )


def test_a_denial_says_denied_and_its_title_can_be_given() -> None:
    denied = approval(
        state=ApprovalState.DENIED, decided_at=NOW, decided_by="4242", decided_via="gchat"
    )
    card = outcome_card(denied, NOW, owner("Ada"), title="Not run")
    assert card.title == "Not run"
    assert card.body == "$ rm -r old\nDenied by Ada at 14:05 via gchat."


def test_an_expiry_and_an_interruption_say_nothing_ran_again() -> None:
    expired = outcome_card(approval(state=ApprovalState.EXPIRED), NOW, owner())
    assert expired.title == "Expired"
    assert expired.body == "$ rm -r old\nExpired: nobody decided in time, so nothing ran."
    cut = outcome_card(approval(state=ApprovalState.INTERRUPTED), NOW, owner())
    assert cut.body.endswith("Lancelot stopped while this was running; it was not started again.")
    assert outcome_card(approval(state=ApprovalState.NOT_RUN), NOW, owner()).title == "Not run"


def test_an_outcome_without_a_command_repeats_what_it_does() -> None:
    done = approval("file.delete", None, {"path": "a.md"}, state=ApprovalState.EXECUTED)
    card = outcome_card(done, NOW, owner(), buttons=(Button("Undo", "u:1"),))
    assert card.body == "This deletes a file: a.md" + SOUL_ASKS
    assert [b.label for b in card.buttons] == ["Undo"]


WORDS = {
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


def test_every_kind_of_action_is_said_in_the_owners_words() -> None:
    said = {cap: what_it_does(approval(cap, None, {})) for cap in WORDS}
    assert said == {cap: f"This {words}{SOUL_ASKS}" for cap, words in WORDS.items()}
