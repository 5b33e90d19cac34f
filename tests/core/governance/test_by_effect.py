"""Shell governance by effect, from the chat, on the real Docker sandbox: what a command would
change decides; Approve applies exactly that; Deny drops it; Undo takes a change back."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from pathlib import Path

import pytest

from bot.app import Lancelot, assemble
from bot.sandbox import sandbox_limits
from core.commands.router import CommandContext
from core.config import Settings, load_settings
from core.events import ButtonPress, Card, CardKind, Inbound
from core.governance.commands import GovernanceCommands, shell_action
from core.governance.decision import Decision
from core.governance.execution import Executor
from core.governance.gateway import Limit, ToolGateway
from core.governance.outcomes import OutcomeKind, ToolOutcome
from core.governance.rollback import RollbackJournal
from core.receipts.base import ReceiptQuery
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.effects import ShellEffects
from core.tools.effects.provider import APPLY, EffectApplier, SandboxDryRuns
from core.tools.router import ToolRouter
from core.tools.sandbox import DockerEngine
from core.tools.workspace import Workspace
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import CHAT, OWNER, say, tap
from tests.fakes.workspace import put


@pytest.fixture
def settings(tmp_path: Path, docker_image: str) -> Settings:
    return load_settings(
        environ={"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_SANDBOX_IMAGE": docker_image}
    )


def ws(app: Lancelot) -> Path:
    return app.home / "workspace"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def kinds(app: Lancelot, action_type: str, status: str | None = None) -> list[str]:
    await app.ledger.flush()
    query = ReceiptQuery(action_type=action_type, status=status, limit=100)
    page = await app.ledger.page(query)
    return [r.action_name for r in reversed(page.receipts)]


async def test_a_write_applies_at_once_and_undo_takes_it_back(
    app: Lancelot, phone: MemoryChannel
) -> None:
    put(ws(app) / "notes.md", "keep me")
    card = await say(app, phone, "/run echo hi > a.txt && echo more >> notes.md")
    # An append overwrites notes.md: that needs the owner. A plain create does not.
    assert card.kind is CardKind.APPROVAL
    assert "overwrites notes.md" in card.body
    await tap(app, phone, card, "Deny")
    made = await say(app, phone, "/run echo hi > a.txt")
    assert made.kind is CardKind.REPLY
    assert (
        made.body == "$ echo hi > a.txt\nexit 0\n(no output)\n\nChanged: it creates 1 file: a.txt."
    )
    assert (ws(app) / "a.txt").read_text() == "hi\n"
    assert [b.label for b in made.buttons] == ["Undo"]
    undone = await tap(app, phone, made, "Undo")
    assert undone.title == "Undone"
    assert not (ws(app) / "a.txt").exists()
    assert (ws(app) / "notes.md").read_text() == "keep me"
    assert await kinds(app, "change_undone") == ["shell.apply"]


async def sandbox_answers() -> str | None:
    """The sandbox's word when a command comes: nothing is wrong."""
    return None


async def test_a_step_failing_its_check_is_undone_and_the_card_says_so(
    app: Lancelot, tmp_path: Path
) -> None:
    # Something changed the file the step wrote before its check read it (a check that says
    # so at once stands in for that race): the step is rolled back and the /run card says
    # so. The gateway is the app's, down to its rollback journal and its check.
    kit = app.governance
    assert kit is not None
    workspace = Workspace(ws(app))

    async def changed_underneath(action: ToolAction, result: ToolResult) -> str | None:
        return "/workspace/a.txt does not hold what the step wrote"

    (tmp_path / "snapshots").mkdir()
    journal = RollbackJournal(workspace, app.ledger, changed_underneath, tmp_path / "snapshots")
    limits = sandbox_limits(app.settings)
    effects = ShellEffects(DockerEngine(), workspace, tmp_path / "fx", kit.capabilities, limits)
    async with effects:
        applier = ToolRouter()
        applier.register(EffectApplier(effects, kit.capabilities), (APPLY,), local=True)
        executor = Executor(kit.policy, applier, app.ledger, journal)
        dry_runs = SandboxDryRuns(effects, sandbox_answers)
        gateway = ToolGateway(kit.policy, kit.approvals, executor, app.ledger, dry_runs)
        commands = GovernanceCommands(app.commands, gateway, kit.approvals, workspace)
        asked = Inbound("memory", OWNER, CHAT, "/run echo hi > a.txt")
        card = await commands.run(CommandContext(asked, "echo hi > a.txt", "r-1"))
    assert card is not None
    assert card.body.split("\n\n") == [
        "$ echo hi > a.txt\nexit 0\n(no output)",
        "The step failed its check, so its changes were undone.",
        "Changed: it creates 1 file: a.txt.",
    ]
    assert card.buttons == ()
    assert not (ws(app) / "a.txt").exists()
    assert await kinds(app, "verification_failed") == ["shell.apply"]


async def test_a_disguised_delete_waits_for_a_card_that_names_the_file(
    app: Lancelot, phone: MemoryChannel
) -> None:
    target = put(ws(app) / "x" / "precious.txt", "data")
    card = await say(app, phone, "/run c=rm; $c -rf x")
    assert card.kind is CardKind.APPROVAL
    assert card.title == "Approve these changes?"
    assert "deletes" in card.body
    assert "x/" in card.body
    assert "T3" not in card.body + card.title  # tiers go to receipts, not the card
    assert "shell." not in card.body  # nor capability ids
    assert target.exists()
    denied = await tap(app, phone, card, "Deny")
    assert denied.title == "Denied"
    assert target.read_text() == "data"
    assert await kinds(app, "dry_run_discarded") == ["shell.apply"]
    assert await kinds(app, "tool_run") == []  # nothing was applied


async def test_approve_applies_the_dry_run_and_nothing_runs_again(
    app: Lancelot, phone: MemoryChannel
) -> None:
    put(ws(app) / "log.txt", "old")
    # $RANDOM differs on every run: applying must not run the command a second time.
    card = await say(app, phone, "/run echo $RANDOM$RANDOM > log.txt")
    shown = await app.ledger.page(ReceiptQuery(action_type="dry_run", limit=1))
    effects = shown.receipts[0].decoded("outputs")["effects"]
    assert effects["effects"][0]["path"] == "log.txt"
    after = effects["effects"][0]["after"]["sha256"]
    done = await tap(app, phone, card, "Approve")
    assert done.title == "Executed"
    assert sha(ws(app) / "log.txt") == after
    assert [b.label for b in done.buttons] == ["Undo"]
    undone = await tap(app, phone, done, "Undo")
    assert undone.title == "Undone"
    assert (ws(app) / "log.txt").read_text() == "old"


async def test_a_workspace_changed_under_the_dry_run_is_not_applied(
    app: Lancelot, phone: MemoryChannel
) -> None:
    target = put(ws(app) / "plan.md", "v1")
    card = await say(app, phone, "/run rm plan.md")
    target.write_text("v2, written after the dry run")
    done = await tap(app, phone, card, "Approve")
    assert done.title == "Not applied"
    assert target.read_text() == "v2, written after the dry run"
    assert "plan.md" in done.body
    assert "Run the command again" in done.body
    assert [b.label for b in done.buttons] == ["Dry run again"]
    again = await tap(app, phone, done, "Dry run again")
    assert again.title == "Dry-run again"
    fresh = (await phone.next_card())[1]
    while fresh.kind is not CardKind.APPROVAL:
        fresh = (await phone.next_card())[1]
    assert "deletes 1 file: plan.md" in fresh.body
    await tap(app, phone, fresh, "Approve")
    assert not target.exists()


async def test_a_delete_whose_files_are_already_gone_is_not_applied_again(
    app: Lancelot, phone: MemoryChannel
) -> None:
    put(ws(app) / "dir14" / "a.txt", "a")
    card = await say(app, phone, "/run rm -rf dir14")
    assert card.kind is CardKind.APPROVAL
    shutil.rmtree(ws(app) / "dir14")  # done by hand (or by a first run) before the tap
    done = await tap(app, phone, card, "Approve")
    assert done is not None
    assert done.title == "Not applied"
    assert "no longer matches the dry run" in done.body
    assert "dir14" in done.body
    assert [b.label for b in done.buttons] == ["Dry run again"]
    assert await kinds(app, "tool_run", "success") == []  # no "Executed", nothing applied
    assert (await say(app, phone, "/undo")).title == "Nothing to undo"
    again = await tap(app, phone, done, "Dry run again")
    assert again is not None
    assert again.title == "/run"


async def test_a_new_directory_in_the_place_of_a_deleted_one_survives_the_approve(
    app: Lancelot, phone: MemoryChannel
) -> None:
    put(ws(app) / "dir14" / "old.txt", "old")
    card = await say(app, phone, "/run rm -rf dir14")
    shutil.rmtree(ws(app) / "dir14")
    fresh = put(ws(app) / "dir14" / "new.txt", "made after the dry run")
    done = await tap(app, phone, card, "Approve")
    assert done is not None
    assert done.title == "Not applied"
    assert fresh.read_text() == "made after the dry run"
    assert await kinds(app, "tool_run", "success") == []
    again = await tap(app, phone, done, "Dry run again")
    assert again is not None
    assert again.title == "Dry-run again"
    asks = (await phone.next_card())[1]
    while asks.kind is not CardKind.APPROVAL:
        asks = (await phone.next_card())[1]
    assert "new.txt" in asks.body or "dir14" in asks.body


async def test_a_message_handled_again_after_a_crash_asks_once(
    settings: Settings,
) -> None:
    """A replay (the same update, kept in the inbox, handed on again) finds the approval
    its first handling made: no second dry run, no second approval, no second card."""
    message = Inbound("memory", OWNER, CHAT, "/run rm -rf dir14", arrival=14)
    async with assemble(settings, web=False) as first:
        phone = MemoryChannel()
        await first.attach(phone)
        put(ws(first) / "dir14" / "a.txt", "a")
        await first.bus.publish(message)
        card = (await phone.next_card())[1]
        assert card.kind is CardKind.APPROVAL
        await first.bus.publish(message)  # handled again, as after a crash
        await first.bus.drained()
        assert await kinds(first, "dry_run") == ["shell.exec"]
        assert await kinds(first, "approval_requested") == ["shell.apply"]
        approved = await tap(first, phone, card, "Approve")
        assert approved is not None
        assert approved.title == "Executed"
    async with assemble(settings, web=False) as second:
        phone2 = MemoryChannel()
        await second.attach(phone2)
        put(ws(second) / "dir14" / "b.txt", "made after the approved delete")
        await second.bus.publish(message)  # after a restart, the approval already ran
        await second.bus.drained()
        assert phone2.pending() == 0  # no card, no reply: it was answered the first time
        assert await kinds(second, "approval_requested") == ["shell.apply"]
        assert await kinds(second, "tool_run", "success") == ["shell.apply"]
        assert (ws(second) / "dir14" / "b.txt").exists()


async def test_undo_refuses_when_a_later_change_touched_the_same_file(
    app: Lancelot, phone: MemoryChannel
) -> None:
    first = await say(app, phone, "/run echo one > a.txt")
    (ws(app) / "a.txt").write_text("edited since")
    refused = await tap(app, phone, first, "Undo")
    assert refused.title == "Not undone"
    assert "a.txt" in refused.body
    assert (ws(app) / "a.txt").read_text() == "edited since"
    assert await kinds(app, "undo_refused") == ["shell.apply"]


async def test_undo_lists_recent_changes_with_buttons(app: Lancelot, phone: MemoryChannel) -> None:
    assert (await say(app, phone, "/undo")).title == "Nothing to undo"
    await say(app, phone, "/run mkdir docs")
    await say(app, phone, "/run touch docs/readme")
    listing = await say(app, phone, "/undo")
    assert listing.title == "Recent changes"
    assert "touch docs/readme" in listing.body.splitlines()[0]  # newest first
    assert [b.label for b in listing.buttons] == ["Undo 1", "Undo 2"]
    await tap(app, phone, listing, "Undo 1")
    assert not (ws(app) / "docs" / "readme").exists()
    assert (ws(app) / "docs").is_dir()


async def test_a_failed_command_and_a_move(app: Lancelot, phone: MemoryChannel) -> None:
    failed = await say(app, phone, "/run touch half && false")
    assert "none of its changes were applied" in failed.body
    assert not (ws(app) / "half").exists()
    put(ws(app) / "junk.txt", "x")
    moved = await say(app, phone, "/run mkdir trash && mv junk.txt trash/")
    assert moved.kind is CardKind.REPLY  # nothing is lost by a move: no card
    assert (ws(app) / "trash" / "junk.txt").read_text() == "x"


async def test_a_restart_between_dry_run_and_approve(settings: Settings) -> None:
    async with assemble(settings, web=False) as first:
        phone = MemoryChannel()
        await first.attach(phone)
        put(ws(first) / "old.log", "x")
        card: Card = await say(first, phone, "/run rm old.log")
        assert card.kind is CardKind.APPROVAL
        ref = phone.delivered[-1][0]
    async with assemble(settings, web=False) as second:
        phone2 = MemoryChannel()
        await second.attach(phone2)
        token = next(b.action_token for b in card.buttons if b.label == "Approve")
        # The old message's button, tapped after the restart.
        await second.bus.publish(ButtonPress("memory", "owner", "owner-chat", ref, token))
        await second.bus.drained()
        assert phone2.edits[-1][1].title == "Executed"
        assert not (ws(second) / "old.log").exists()
        assert await kinds(second, "tool_run") == ["shell.apply"]


@pytest.fixture
def no_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")


async def test_without_a_sandbox_only_provably_read_only_commands_run_at_once(
    no_engine: None, tmp_path: Path
) -> None:
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home")})
    async with assemble(settings, web=False) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        (ws(app) / "a.txt").write_text("hello")
        read = await say(app, phone, "/run cat a.txt")
        assert "hello" in read.body  # SafeREPL, at once
        card = await say(app, phone, "/run touch b.txt")  # harmless, but cannot be seen first
        assert card.kind is CardKind.APPROVAL
        assert "cannot see what this command would change" not in card.title
        assert not (ws(app) / "b.txt").exists()
        await app.ledger.flush()
        page = await app.ledger.page(ReceiptQuery(action_type="policy_decision", limit=10))
        (asked,) = [r.decoded("outputs") for r in page.receipts if "touch" in r.inputs]
        assert asked["reason"] == (
            "I cannot see what this command would change before it runs (no sandbox to "
            "dry-run it in), so it needs your approval"
        )


async def test_a_name_too_long_for_the_file_system_is_answered_not_crashed(
    app: Lancelot, phone: MemoryChannel
) -> None:
    put(ws(app) / "a.txt", "x")
    card = await say(app, phone, f"/run mv a.txt {'n' * 300}")
    assert "File name too long" in card.body or "too long" in card.body
    assert (ws(app) / "a.txt").exists()


async def test_undo_is_offered_only_within_the_window_the_settings_give(
    tmp_path: Path, docker_image: str
) -> None:
    settings = load_settings(
        environ={
            "LANCELOT_HOME": str(tmp_path / "home"),
            "LANCELOT_SANDBOX_IMAGE": docker_image,
            "LANCELOT_SANDBOX_UNDO_HOURS": "0.0003",  # about a second
        }
    )
    async with assemble(settings, web=False) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        made = await say(app, phone, "/run echo hi > a.txt")
        assert [b.label for b in made.buttons] == ["Undo"]
        await asyncio.sleep(1.3)
        late = await tap(app, phone, made, "Undo")  # the button lapsed with the window
        assert late is None or late.title == "Not undone"
        assert (ws(app) / "a.txt").exists()
        await app.drain()
        while phone.pending():  # the notice that the button lapsed
            await phone.next_card()
        assert (await say(app, phone, "/undo")).title == "Nothing to undo"


async def test_the_gateway_tells_a_command_that_changed_nothing_or_failed_as_a_t0_run(
    app: Lancelot,
) -> None:
    kit = app.governance
    assert kit is not None
    workspace = Workspace(ws(app))

    async def run(command: str, limit: Limit | None = None) -> ToolOutcome:
        action = shell_action(command, workspace)
        return await kit.gateway.run(
            action, via="memory", parent_id="p", quest_id=None, limit=limit
        )

    def not_for_a_skill(decision: Decision) -> ToolOutcome:
        return ToolOutcome(OutcomeKind.NOT_PERMITTED, decision.tier, "", reason="above its risk")

    quiet = await run("touch tmp && rm tmp && echo done")  # no effect left behind
    assert (quiet.kind, quiet.tier, quiet.exit_code) == (OutcomeKind.RAN, "T0", 0)
    assert quiet.text == "exit 0\ndone"
    assert (quiet.effects, quiet.change_id) == ("", None)
    failed = await run("touch half && false")
    assert (failed.kind, failed.tier, failed.exit_code) == (OutcomeKind.RAN, "T0", 1)
    assert failed.effects == "creates 1 file: half"
    assert failed.change_id is None
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type="dry_run", limit=10))
    shown = {r.id: r.decoded("inputs")["dry_run"] for r in page.receipts}
    assert [quiet.receipt_ids, failed.receipt_ids] == [(r,) for r in reversed(list(shown))]
    # Only the dry run is recorded; the failed one's half-done layer is gone from disk.
    assert not (app.home / "dryruns" / shown[failed.receipt_ids[0]]).exists()
    assert not (ws(app) / "half").exists()
    refused = await run("echo hi > new.txt", not_for_a_skill)  # a caller's limit refuses
    assert refused.kind is OutcomeKind.NOT_PERMITTED
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type="dry_run", limit=1))
    [dropped] = [r.decoded("inputs")["dry_run"] for r in page.receipts]
    assert not (app.home / "dryruns" / dropped).exists()  # its dry run is dropped
    assert not (ws(app) / "new.txt").exists()
