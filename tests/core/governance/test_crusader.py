"""Crusader mode changes decisions, exactly as the Soul says: scheduled T2 work runs without a
card; nothing else changes (T0/T1 never ask, direct T2 runs anyway, T3 and must-ask kinds always
ask). Then the switch as the owner uses it: /crusader, the word, the /status button, the
scheduled job it lets through, and FEATURE_CRUSADER switching all of it off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.app import Lancelot
from core.commands.registry import CommandContext, CommandRegistry
from core.events import CardKind, Inbound
from core.governance.crusader import CrusaderMode
from core.governance.crusader_commands import CrusaderCommands
from core.governance.policy import Decision, PolicyEngine, Verdict
from core.receipts.base import ReceiptQuery
from core.scheduler import READY, Gates, JobContext
from core.scheduler.config import JobSpec
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from soul import SHIPPED_VERSIONS_DIR, SoulStore
from tests.fakes.calendar import CalendarClock, utc
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap
from tests.fakes.scheduled_app import receipts, scheduled_app, scheduler, write_jobs

SOUL = SoulStore(SHIPPED_VERSIONS_DIR, Path("/nonexistent-state")).load_active()


def shell(command: str, **facts: object) -> ToolAction:
    return ToolAction("shell.exec", command, {"in_workspace": True, **facts})


def tool(capability: str, **params: object) -> ToolAction:
    return ToolAction(capability, None, dict(params))


# 20 actions: commands and tool calls judged by their rules, and dry runs' effect sets.
ACTIONS: dict[str, ToolAction | tuple[str, ...]] = {
    "ls": shell("ls -la"),
    "git status": shell("git status"),
    "mkdir": shell("mkdir build"),
    "redirect": shell("echo hi > b.txt"),
    "mv to a new name": shell("mv a b", overwrites=False),
    "pip install": shell("pip install requests"),
    "git commit": shell("git commit -m wip"),
    "unknown command": shell("make all"),
    "repo.commit": tool("repo.commit"),
    "rm": shell("rm -rf old"),
    "git push": shell("git push origin main"),
    "curl POST": shell("curl -X POST https://example.org"),
    "mv over a file": shell("mv a b", overwrites=True),
    "file.delete": tool("file.delete"),
    "net GET": tool("net.request", method="GET"),
    "net POST": tool("net.request", method="POST"),
    "effect: creates": ("creates",),
    "effect: symlinks": ("symlinks",),
    "effect: git refs moved": ("git_refs_moved",),
    "effect: deletes": ("deletes",),
}
T2 = {"pip install", "git commit", "unknown command", "repo.commit"}
T2 |= {"effect: symlinks", "effect: git refs moved"}


JOBS = """
  mover:
    run: builtin:count
    every_seconds: 60
    tier: T2
  asked:
    run: builtin:count
    every_seconds: 60
    tier: T2
    requires_approval: true
  rotation:
    run: builtin:count
    every_seconds: 60
    tier: T3
    requires_approval: true
"""


def decide(engine: PolicyEngine, what: ToolAction | tuple[str, ...], scheduled: bool) -> Decision:
    if isinstance(what, ToolAction):
        return engine.decide(what, autonomous=scheduled)
    return engine.judge_effects(
        shell("anything"), what, command=shell("anything"), autonomous=scheduled
    )


def test_crusader_changes_exactly_the_scheduled_t2_decisions() -> None:
    def table(on: bool) -> dict[tuple[str, str], Decision]:
        engine = PolicyEngine(lambda: SOUL, CapabilityTokens(b"k" * 32), lambda: on)
        return {
            (name, mode): decide(engine, what, mode == "scheduled")
            for name, what in ACTIONS.items()
            for mode in ("direct", "scheduled")
        }

    off, on = table(False), table(True)
    assert len(off) == 40
    differ = {key for key in off if off[key].verdict is not on[key].verdict}
    assert differ == {(name, "scheduled") for name in T2}
    for key in differ:
        assert off[key].verdict is Verdict.NEEDS_APPROVAL
        assert on[key].verdict is Verdict.ALLOW
        assert on[key].auto_approved
        assert on[key].tier == "T2"
        assert on[key].capability
    # What the mode never touches: every T3 still asks, direct or scheduled.
    for key, decision in on.items():
        if decision.tier == "T3":
            assert decision.verdict is Verdict.NEEDS_APPROVAL, key


def test_a_soul_must_ask_kind_still_asks_in_crusader_mode() -> None:
    strict = SOUL.model_copy(
        update={"requires_approval": (*SOUL.requires_approval, "effect.symlinks")}
    )
    engine = PolicyEngine(lambda: strict, CapabilityTokens(b"k" * 32), lambda: True)
    assert decide(engine, ("symlinks",), True).verdict is Verdict.NEEDS_APPROVAL
    assert decide(engine, ("git_refs_moved",), True).verdict is Verdict.ALLOW


def job(tier: str, *, requires_approval: bool = False) -> JobSpec:
    return JobSpec.model_validate(
        {
            "name": f"job-{tier}",
            "run": "builtin:noop",
            "tier": tier,
            "requires_approval": requires_approval,
            "every_seconds": 3600,
        }
    )


@pytest.mark.parametrize(
    ("tier", "must_ask", "waived"),
    [("T1", False, False), ("T2", False, True), ("T2", True, False), ("T3", False, False)],
)
async def test_scheduled_jobs_wait_for_the_owner_unless_crusader_waives_t2(
    tier: str, must_ask: bool, waived: bool
) -> None:
    engine = PolicyEngine(lambda: SOUL, CapabilityTokens(b"k" * 32), lambda: True)

    async def healthy() -> bool:
        return True

    gates = Gates(lambda: READY, healthy, lambda: SOUL, crusader=engine.crusader_approves)
    spec = job(tier, requires_approval=must_ask)
    assert gates.waived(spec, approved=False) is waived
    refusal = await gates.check(spec, approved=False)
    assert (refusal is None) is (tier == "T1" or waived)
    off = Gates(lambda: READY, healthy, lambda: SOUL)
    assert (await off.check(spec, approved=False) is None) is (tier == "T1")


async def test_the_word_the_status_button_and_the_command(app: Lancelot) -> None:
    phone = MemoryChannel()
    await app.attach(phone)
    shown = await say(app, phone, "/crusader")
    assert shown.title == "Crusader mode"
    assert "Now: off" in shown.body
    assert [b.label for b in shown.buttons] == ["Crusader on"]
    assert (await say(app, phone, "Crusader")).title == "Crusader mode on"
    status = await say(app, phone, "/status")
    assert dict(status.fields)["Crusader"].startswith("on, 60 min left")
    edited = await tap(app, phone, status, "Crusader off")
    assert edited is not None
    assert edited.title == "Crusader mode off"
    assert dict((await say(app, phone, "/status")).fields)["Crusader"] == "off"
    assert (await say(app, phone, "crusader!")).title == "Crusader mode on"  # any case
    assert (await say(app, phone, "/crusader off")).title == "Crusader mode off"
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type="crusader", limit=10))
    assert sorted(r.action_name for r in page.receipts) == ["off", "off", "on", "on"]


async def test_feature_crusader_off_stops_every_auto_approval(app: Lancelot) -> None:
    phone = MemoryChannel()
    await app.attach(phone)
    assert app.governance is not None
    policy = app.governance.policy
    commit = shell("git commit -m nightly")
    await say(app, phone, "/crusader on")
    assert policy.decide(commit, autonomous=True).verdict is Verdict.ALLOW
    app.features.set("CRUSADER", False)  # as /features or a SIGHUP would
    assert policy.decide(commit, autonomous=True).verdict is Verdict.NEEDS_APPROVAL
    assert not policy.crusader_approves("T2")
    card = await say(app, phone, "Crusader")
    assert card.kind is CardKind.NOTICE
    assert "FEATURE_CRUSADER" in card.body
    status = await say(app, phone, "/status")
    assert dict(status.fields)["Crusader"] == "switched off (FEATURE_CRUSADER)"
    assert not [b for b in status.buttons if b.label.startswith("Crusader")]
    app.features.set("CRUSADER", True)  # the mode itself was never switched off
    assert policy.decide(commit, autonomous=True).verdict is Verdict.ALLOW


async def test_a_scheduled_t2_job_runs_without_a_card_while_crusader_is_on(
    tmp_path: Path,
) -> None:
    clock = CalendarClock(utc(2026, 11, 23, 9, 0, 30))
    ran: list[str] = []

    async def count(ctx: JobContext) -> str:
        ran.append(ctx.job)
        return "counted"

    phone = MemoryChannel()
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(
        tmp_path / "home", clock, jobs, channels=(phone,), runners={"builtin:count": count}
    ) as app:
        await say(app, phone, "Crusader")
        clock.advance(60)
        await scheduler(app).run_pending()
        assert sorted(ran) == ["mover"]  # T2; the T3 job and the must-ask one still wait
        asks = sorted(c.title for _, c in phone.delivered if c.kind is CardKind.APPROVAL)
        assert asks == ["Run asked?", "Run rotation?"]
        (run,) = await receipts(app, "scheduled_job_run")
        assert json.loads(run.metadata)["approved_by"] == "crusader"
        await say(app, phone, "/crusader off")
        clock.advance(60)
        await scheduler(app).run_pending()
        assert sorted(ran) == ["mover"]
        skipped = [r.action_name for r in await receipts(app, "scheduled_job_skipped")]
        assert skipped.count("mover") == 1


async def test_what_the_crusader_cards_say(app: Lancelot) -> None:
    phone = MemoryChannel()
    await app.attach(phone)
    what = (
        "While it is on (at most 60 minutes), T1 and T2 work runs without a card, scheduled "
        "work too, each with a receipt saying Crusader approved it. T3 and anything the Soul "
        "says must be asked still wait for you."
    )
    shown = await say(app, phone, "/crusader")
    assert shown.body == (
        f"Now: off.\n{what}\n"
        "Switch it with the button, /crusader on or /crusader off, or just say Crusader."
    )
    on = await tap(app, phone, shown, "Crusader on")
    assert on is not None
    assert (on.title, on.body) == ("Crusader mode on", what)
    off = await say(app, phone, "/crusader OFF")
    assert (off.title, off.body) == ("Crusader mode off", "Every action asks as the Soul says.")
    usage = await say(app, phone, "/crusader maybe")
    assert (usage.title, usage.body) == ("Usage", "/crusader on, /crusader off, or /crusader")
    assert (
        "/crusader [on|off] - Crusader mode: scheduled T2 work runs without a card, time-boxed"
        in (await say(app, phone, "/help")).body
    )
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type="crusader", limit=10))
    inputs = [json.loads(r.inputs) for r in reversed(page.receipts)]
    assert inputs == [{"minutes": 60, "via": phone.name}, {"minutes": 0, "via": phone.name}]


async def test_a_crusader_button_pressed_after_the_feature_went_off_changes_nothing(
    app: Lancelot,
) -> None:
    phone = MemoryChannel()
    await app.attach(phone)
    shown = await say(app, phone, "/crusader")
    app.features.set("CRUSADER", False)
    pressed = await tap(app, phone, shown, "Crusader on")
    assert pressed is not None
    assert (pressed.title, pressed.kind) == ("Crusader mode is off", CardKind.NOTICE)
    assert pressed.body == (
        "Crusader mode is switched off on this install (FEATURE_CRUSADER), so nothing is "
        "auto-approved. /features can switch it back on."
    )
    told = await say(app, phone, "/crusader on")
    assert (told.title, told.body) == ("Crusader mode is off", pressed.body)
    app.features.set("CRUSADER", True)
    assert dict((await say(app, phone, "/status")).fields)["Crusader"] == "off"


async def test_a_soul_whose_crusader_approves_no_tier_says_so(app: Lancelot) -> None:
    none = SOUL.model_copy(update={"crusader": SOUL.crusader.model_copy(
        update={"auto_approve_tiers": ()})})  # fmt: skip
    mode = CrusaderMode(app.state)
    await mode.setup()
    switch = CrusaderCommands(
        CommandRegistry(), mode, app.ledger, app.tokens, lambda: none, allowed=lambda: True
    )
    card = await switch.command(CommandContext(Inbound("memory", "1", "1", "/crusader"), "", "r"))
    assert "(at most 60 minutes), no work runs without a card" in card.body
