"""/run under governance, as the owner sees it: refusals, approval cards, taps, restarts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.app import Lancelot, assemble
from bot.governance import soul_store
from core.config import Settings
from core.events import ButtonPress, CardKind
from core.receipts.base import ReceiptQuery
from soul import SHIPPED_VERSIONS_DIR
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap
from tests.fakes.workspace import put


async def phone_for(app: Lancelot) -> MemoryChannel:
    channel = MemoryChannel()
    await app.attach(channel)
    return channel


def workspace(app: Lancelot) -> Path:
    return app.home / "workspace"


async def kinds(app: Lancelot, action_type: str) -> list[str]:
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type=action_type, limit=100))
    return [r.action_name for r in page.receipts]


async def test_read_only_command_runs_at_once(app: Lancelot) -> None:
    phone = await phone_for(app)
    (workspace(app) / "notes.txt").write_text("hello")
    card = await say(app, phone, "/run ls -la /workspace")
    assert "exit 0" in card.body
    assert "notes.txt" in card.body
    assert "Changed" not in card.body  # a read changes nothing: no Undo either
    assert (card.title, card.buttons) == ("/run", ())


async def test_denylisted_command_names_rule_and_alternatives(app: Lancelot) -> None:
    phone = await phone_for(app)
    card = await say(app, phone, "/run rm -rf /")
    assert (card.title, card.body) == (
        "Not allowed (rule deny-rm-root)",
        "$ rm -rf /\nDeletes the whole filesystem or home directory.\n\nInstead you could:\n"
        "- Delete the specific paths inside the workspace (this asks for approval).\n"
        "- Move files to a trash folder in the workspace instead of deleting them.",
    )
    assert "deny" in await kinds(app, "policy_decision")


async def test_a_deny_rule_without_alternatives_offers_none(settings: Settings) -> None:
    # The owner's soul may drop a rule's alternatives (the linter only warns): the refusal
    # then says why and nothing more.
    offered = (
        "      alternatives:\n        - Ask the owner to restart the host by hand.\n"
        "        - Restart only the service that needs it, through its own command.\n"
    )
    v1 = (SHIPPED_VERSIONS_DIR / "soul_v1.yaml").read_text(encoding="utf-8")
    assert offered in v1
    v2 = v1.replace("version: 1\n", "version: 2\n", 1).replace(offered, "")
    soul_store(settings.home).activate(2, text=v2)
    async with assemble(settings, web=False) as app:
        card = await say(app, await phone_for(app), "/run shutdown now")
    assert (card.title, card.body) == (
        "Not allowed (rule deny-power)",
        "$ shutdown now\nStops or restarts the machine Lancelot runs on.",
    )


async def test_run_alone_says_how_and_help_names_the_governed_commands(app: Lancelot) -> None:
    phone = await phone_for(app)
    usage = await say(app, phone, "/run   ")
    assert (usage.title, usage.body) == ("Usage", "/run <command>, for example /run ls -la")
    listing = (await say(app, phone, "/help")).body.splitlines()
    assert "/run <command> - run a command in the workspace, under governance" in listing
    assert "/approvals - what is waiting for your decision" in listing


async def test_destructive_command_waits_for_approval_and_deny_keeps_files(
    app: Lancelot,
) -> None:
    phone = await phone_for(app)
    put(workspace(app) / "old" / "keep.txt", "precious")
    card = await say(app, phone, "/run rm -rf /workspace/old")
    assert card.kind is CardKind.APPROVAL
    assert [b.label for b in card.buttons] == ["Approve", "Deny"]
    assert "rm -rf /workspace/old" in card.body
    await tap(app, phone, card, "Deny")
    assert (workspace(app) / "old" / "keep.txt").exists()
    _, edited = phone.edits[-1]
    assert edited.title.startswith("Denied")
    assert "Denied by owner" in edited.body
    assert edited.buttons == ()
    await app.ledger.flush()
    [denied] = (await app.ledger.page(ReceiptQuery(action_type="approval_denied"))).receipts
    assert json.loads(denied.outputs) == {"outcome": f"denied by owner via {phone.name}"}


async def test_approve_runs_exactly_once_and_replays_do_nothing(app: Lancelot) -> None:
    phone = await phone_for(app)
    put(workspace(app) / "old" / "f.txt")
    card = await say(app, phone, "/run rm -rf /workspace/old")
    await tap(app, phone, card, "Approve")
    assert not (workspace(app) / "old").exists()
    _, edited = phone.edits[-1]
    assert edited.title.startswith("Executed")
    assert "exit 0" in edited.body
    # Same button again, and the Deny button of the same card: both refused.
    await tap(app, phone, card, "Approve")
    await tap(app, phone, card, "Deny")
    assert await kinds(app, "tool_run") == ["shell.apply"]  # applied once, never re-run
    refusals = await kinds(app, "button_refused")
    assert refusals == ["already used", "already used"]


async def test_pending_approval_survives_a_restart(settings: Settings) -> None:
    async with assemble(settings, web=False) as first:
        phone = await phone_for(first)
        put(workspace(first) / "old" / "f.txt")
        card = await say(first, phone, "/run rm -rf /workspace/old")
        ref = phone.delivered[-1][0]
    async with assemble(settings, web=False) as second:
        phone2 = MemoryChannel()
        await second.attach(phone2)
        token = next(b.action_token for b in card.buttons if b.label == "Approve")
        # The old message's button, tapped after the restart.
        await second.bus.publish(ButtonPress("memory", "owner", "owner-chat", ref, token))
        await second.bus.drained()
        assert not (workspace(second) / "old").exists()
        assert phone2.edits[-1][0] == ref
        assert await kinds(second, "tool_run") == ["shell.apply"]


@pytest.mark.parametrize("durable", [False, True], ids=["direct", "outbox"])
async def test_approvals_lists_pending_with_buttons(app: Lancelot, durable: bool) -> None:
    # Through the outbox (as on Telegram), a card id goes to a chat once: /approvals must
    # still send a fresh copy rather than be taken for a duplicate.
    phone = MemoryChannel()
    await app.attach(phone, durable=durable)
    nothing = await say(app, phone, "/approvals")
    assert (nothing.title, nothing.body) == ("Approvals", "Nothing is waiting for your decision.")
    put(workspace(app) / "a")
    await say(app, phone, "/run rm -rf /workspace/a")
    resent = await say(app, phone, "/approvals")
    assert [b.label for b in resent.buttons] == ["Approve", "Deny"]
    await tap(app, phone, resent, "Deny")
    # Every copy of the card was edited to the outcome.
    assert len([e for e in phone.edits if e[1].title.startswith("Denied")]) == 2
    assert [c.title for _, c in phone.delivered].count("Approvals") == 1  # the empty one


async def test_crusader_shows_in_status_and_never_skips_t3(app: Lancelot) -> None:
    phone = await phone_for(app)
    assert "Crusader mode on" in (await say(app, phone, "/crusader on")).title
    status = dict((await say(app, phone, "/status")).fields)
    assert status["Crusader"].startswith("on")
    put(workspace(app) / "x")
    card = await say(app, phone, "/run rm -rf /workspace/x")
    assert card.kind is CardKind.APPROVAL
    assert "Crusader mode off" in (await say(app, phone, "/crusader off")).title
