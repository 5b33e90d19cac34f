"""What-if: recorded decisions decided again under a proposed Soul, sorted by what the owner
would notice (asked more, asked less, refused), told in one sentence."""

from __future__ import annotations

import html
import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import pytest

from bot.app import Lancelot, assemble
from bot.ledger import LEDGER_FILE
from core.config import Settings, load_settings
from core.events import CardKind
from core.governance.decision import INPUTS_KEY
from core.governance.gateway import decision_receipt
from core.governance.policy import PolicyEngine
from core.governance.whatif import what_if, what_if_recorded
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt, StoredReceipt
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from soul import SHIPPED_VERSIONS_DIR, DenyRule, Soul, SoulStore
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap

SHIPPED = SoulStore(SHIPPED_VERSIONS_DIR, Path("/nonexistent")).load_active()
# Linting, diffing and weighing a proposal over the ledger can take past 5 s on a busy
# machine (or under the mutation runner's line tracer): the card is awaited longer.
PROPOSAL = "/soul propose risk_rules: {effects: {creates: T3}}"


def stored(receipt: Receipt, seq: int) -> StoredReceipt:
    """`receipt` as the ledger gives it back."""
    r = receipt
    return StoredReceipt(
        seq, r.id, r.timestamp, r.action_type, r.action_name, json.dumps(r.inputs),
        json.dumps(r.outputs), str(r.status), None, None, None, None, None, None,
        json.dumps(r.metadata), "0", "1",
    )  # fmt: skip


def history(*commands: str, autonomous: bool = False) -> list[StoredReceipt]:
    """The receipts the shipped Soul's engine leaves for these /run commands."""
    engine = PolicyEngine(lambda: SHIPPED, CapabilityTokens(b"k" * 32))
    found = []
    for seq, command in enumerate(commands, start=1):
        action = ToolAction("shell.exec", command, {})
        decision, inputs = engine.judge(action, autonomous=autonomous)
        found.append(stored(decision_receipt(action, decision, inputs=inputs), seq))
    return found


def with_risk(soul: Soul, **changes: object) -> Soul:
    return soul.model_copy(update={"risk_rules": soul.risk_rules.model_copy(update=changes)})


def test_the_same_soul_changes_nothing() -> None:
    found = what_if(history("ls", "make", "rm -rf /workspace/old", "rm -rf /"), SHIPPED, 30)
    assert (found.decisions, found.not_replayable) == (4, 0)
    assert found.sentence() == "Over the last 30 days this would have changed none of 4 decisions."
    one = what_if(history("ls"), SHIPPED, 30)
    assert (
        one.sentence()
        == "Over the last 30 days this would not have changed the one decision recorded."
    )


def test_a_stricter_default_asks_more_and_names_the_commands() -> None:
    found = what_if(
        history("ls", "make", "make", "cargo build"), with_risk(SHIPPED, default_tier="T3"), 30
    )
    assert found.would_ask.count == 3
    assert [c.describe() for c in found.would_ask.examples] == [
        "make (T2 allow, now T3 needs_approval)",
        "make (T2 allow, now T3 needs_approval)",
        "cargo build (T2 allow, now T3 needs_approval)",
    ]
    assert found.sentence() == "Over the last 30 days this would have asked you 3 more times."


def test_a_wider_autonomy_lets_asked_work_run() -> None:
    asked = history("make", "pip install requests", "ls", autonomous=True)
    wider = SHIPPED.scheduling_boundaries.model_copy(update={"max_tier_without_approval": "T2"})
    found = what_if(asked, SHIPPED.model_copy(update={"scheduling_boundaries": wider}), 7)
    assert (found.would_run.count, found.would_ask.count) == (2, 0)
    assert found.sentence() == "Over the last 7 days this would have let 2 commands run that asked."


def test_a_new_deny_rule_refuses_and_everything_is_counted_once() -> None:
    rule = DenyRule(id="no-make", commands=(("make",),), reason="no builds here")
    stricter = with_risk(SHIPPED, denylist=(*SHIPPED.risk_rules.denylist, rule), default_tier="T3")
    found = what_if(history("make", "cargo build", "rm -rf /"), stricter, 30)
    assert [(sort, tally.count) for sort, tally in found.sorts()] == [
        ("would now ask", 1),
        ("would now run without asking", 0),
        ("would now be refused", 1),
    ]
    assert found.sentence() == (
        "Over the last 30 days this would have asked you once more and refused 1 command that "
        "was allowed or asked about."
    )


def test_all_three_changes_are_told_in_one_sentence() -> None:
    rules = tuple(
        rule.model_copy(update={"tier": "T3"}) if rule.id == "shell-workspace-write" else rule
        for rule in SHIPPED.risk_rules.rules
    )
    deny = DenyRule(id="no-cargo", commands=(("cargo",),), reason="no builds here")
    proposed = with_risk(SHIPPED, rules=rules, denylist=(*SHIPPED.risk_rules.denylist, deny))
    wider = SHIPPED.scheduling_boundaries.model_copy(update={"max_tier_without_approval": "T2"})
    proposed = proposed.model_copy(update={"scheduling_boundaries": wider})
    asked = history("make", autonomous=True)
    found = what_if([*history("mkdir build", "cargo build", "cargo test"), *asked], proposed, 30)
    assert found.sentence() == (
        "Over the last 30 days this would have asked you once more, let 1 command run that "
        "asked and refused 2 commands that were allowed or asked about."
    )


def test_examples_are_the_first_few_and_counts_are_all() -> None:
    found = what_if(history(*["make"] * 40), with_risk(SHIPPED, default_tier="T3"), 30)
    assert found.would_ask.count == 40
    assert [change.decision.seq for change in found.would_ask.examples] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("inputs", [{"command": "make"}, {"command": "make", INPUTS_KEY: {}}])
def test_old_receipts_are_counted_as_not_replayable(inputs: object) -> None:
    old = history("make")[0]
    older = StoredReceipt(
        *(json.dumps(inputs) if i == 5 else v for i, v in enumerate(_fields(old)))
    )
    found = what_if([older, *history("ls")], with_risk(SHIPPED, default_tier="T3"), 30)
    assert (found.decisions, found.not_replayable, found.would_ask.count) == (1, 1, 0)


def test_no_history_says_so() -> None:
    found = what_if([], SHIPPED, 30)
    assert (
        found.sentence() == "Over the last 30 days no decision was recorded that this could change."
    )


def _fields(receipt: StoredReceipt) -> list[object]:
    return [getattr(receipt, name) for name in StoredReceipt.__slots__]


@pytest.fixture
def settings(tmp_path: Path, docker_image: str) -> Settings:
    return load_settings(
        environ={"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_SANDBOX_IMAGE": docker_image}
    )


async def test_the_amendment_card_states_its_effect_on_the_history(
    app: Lancelot, phone: MemoryChannel
) -> None:
    for command in ("echo hi > a.txt", "mkdir build", "ls"):
        assert (await say(app, phone, f"/run {command}", wait=30.0)).kind is CardKind.REPLY
    card = await say(app, phone, PROPOSAL, wait=30.0)
    assert card.kind is CardKind.APPROVAL
    assert "-    creates: T1\n+    creates: T3" in card.body
    sentence = "Over the last 30 days this would have asked you 2 more times."
    assert card.body.endswith(f"\n\n{sentence}")
    approved = await tap(app, phone, card, "Approve")
    assert approved is not None
    assert [b.label for b in approved.buttons] == ["Activate", "Reject"]
    assert approved.body.endswith(f"\n\n{sentence}")


async def browse(app: Lancelot, path: str) -> str:
    """A page as a signed-in browser gets it, unescaped."""
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        token = await app.viewer.issue_link()
        async with http.get(f"{app.web_url}/receipts", params={"t": token}) as signed:
            assert signed.status == 200
        async with http.get(f"{app.web_url}{path}") as response:
            assert response.status == 200, await response.text()
            return html.unescape(await response.text())


async def test_the_card_links_to_the_list_of_changes_on_the_receipt_page(
    tmp_path: Path, docker_image: str
) -> None:
    env = {
        "LANCELOT_HOME": str(tmp_path / "home"),
        "LANCELOT_SANDBOX_IMAGE": docker_image,
        "LANCELOT_WEB_PORT": "0",
    }
    async with assemble(load_settings(environ=env), web=True) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        for command in ("echo hi > a.txt", "mkdir build", "ls"):
            assert (await say(app, phone, f"/run {command}", wait=30.0)).kind is CardKind.REPLY
        card = await say(app, phone, PROPOSAL, wait=30.0)
        (link,) = [b.url for b in card.buttons if b.label == "See the list"]
        assert link is not None
        path = urlsplit(link).path
        assert path.startswith("/receipts/whatif/")
        async with (
            aiohttp.ClientSession() as stranger,
            stranger.get(f"{app.web_url}{path}") as refused,
        ):
            assert refused.status == 401  # the ledger is private
        page = await browse(app, path)
    assert "Over the last 30 days this would have asked you 2 more times." in page
    assert "Would now ask: 2" in page
    assert "echo hi > a.txt (T1 allow, now T3 needs_approval)" in page
    assert "mkdir build (T1 allow, now T3 needs_approval)" in page
    assert "Would now run without asking: 0" in page


async def test_the_period_reaches_back_exactly_the_days_asked(tmp_path: Path) -> None:
    engine = PolicyEngine(lambda: SHIPPED, CapabilityTokens(b"k" * 32))
    async with SqliteLedger(tmp_path / LEDGER_FILE) as ledger:
        for day, command in ((1, "make"), (2, "cargo build")):
            action = ToolAction("shell.exec", command, {})
            decision, inputs = engine.judge(action)
            receipt = decision_receipt(action, decision, inputs=inputs)
            ledger.append(replace(receipt, timestamp=f"2026-03-0{day}T12:00:00.000000Z"))
    stricter = with_risk(SHIPPED, default_tier="T3")
    day_after = datetime(2026, 3, 3, 12, tzinfo=UTC).timestamp()

    def asked_again(days: int, now: float) -> list[str]:
        found = what_if_recorded(tmp_path / LEDGER_FILE, stricter, days, now=now)
        return [change.decision.command for change in found.would_ask.examples]

    assert asked_again(1, day_after) == ["cargo build"]
    assert asked_again(1, day_after + 1) == []
    assert asked_again(2, day_after) == ["make", "cargo build"]
