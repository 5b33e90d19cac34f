"""/soul as the owner meets it: what it shows, how a proposal is read, refused or carded,
the receipts each step leaves, and an amendment overtaken by another one."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import yaml

from bot.app import Lancelot, assemble
from core.commands.registry import CommandContext, CommandRegistry
from core.config import Settings
from core.events import Card, CardKind, Inbound
from core.governance.soul_commands import (
    USAGE,
    SoulCommands,
    SoulKeeper,
    merged_soul_text,
    semantic_diff,
)
from core.governance.whatif import WhatIf, what_if_recorded
from core.receipts.base import ReceiptQuery
from core.receipts.model import ReceiptStatus
from soul import SHIPPED_VERSIONS_DIR, Soul, SoulStore
from tests.fakes import owner
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import CHAT, OWNER, tap

V1 = (SHIPPED_VERSIONS_DIR / "soul_v1.yaml").read_text(encoding="utf-8")
TIMEOUT_45 = "/soul propose approval_rules: {timeout_minutes: 45}"
# A proposal is linted and weighed against the receipts in a thread: the first in a process
# takes seconds, more on a loaded machine or under the mutation runner's line tracer.
ANSWER_WITHIN = 30.0


async def say(app: Lancelot, phone: MemoryChannel, text: str) -> Card:
    """The owner's message and the card that answers it (within ANSWER_WITHIN seconds)."""
    return await owner.say(app, phone, text, ANSWER_WITHIN)


async def receipt_of(app: Lancelot, kind: str) -> tuple[dict[str, object], ...]:
    """Every receipt of `kind`, newest first, as (actor, inputs, outputs, status, parent)."""
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type=kind))
    return tuple(
        {
            "actor": r.action_name,
            "inputs": json.loads(r.inputs),
            "outputs": json.loads(r.outputs),
            "status": r.status,
            "parent": r.parent_id,
        }
        for r in page.receipts
    )


async def waiting(app: Lancelot, phone: MemoryChannel) -> str:
    """The /soul card's count of amendments waiting for the owner."""
    return dict((await say(app, phone, "/soul")).fields)["Amendments waiting"]


def test_a_partial_change_keeps_every_other_key_and_merges_mappings() -> None:
    merged = yaml.safe_load(merged_soul_text(V1, "approval_rules: {timeout_minutes: 45}"))
    active = yaml.safe_load(V1)
    assert merged["approval_rules"] == {**active["approval_rules"], "timeout_minutes": 45}
    assert {k: v for k, v in merged.items() if k != "approval_rules"} == {
        k: v for k, v in active.items() if k != "approval_rules"
    }
    assert list(merged) == list(active)  # the soul's own order, not sorted


def test_a_whole_soul_is_taken_as_written_comments_and_all() -> None:
    whole = V1.replace("version: 1", "version: 1  # kept as typed", 1)
    assert merged_soul_text(V1, whole) == whole
    active = yaml.safe_load(V1)
    without_rules = yaml.safe_dump({k: v for k, v in active.items() if k != "risk_rules"})
    assert "risk_rules" in merged_soul_text(V1, without_rules)  # not whole: merged over v1


def test_a_merged_soul_keeps_other_scripts_as_typed() -> None:
    merged = merged_soul_text(V1, "mission: Sers le propriétaire — toujours.")
    assert "mission: Sers le propriétaire — toujours.\n" in merged
    assert yaml.safe_load(merged)["mission"] == "Sers le propriétaire — toujours."


def test_a_value_given_for_a_mapping_replaces_it() -> None:
    merged = yaml.safe_load(merged_soul_text(V1, "approval_rules: 5"))
    assert merged["approval_rules"] == 5  # the linter then refuses it, not the merge


def test_three_whole_soul_keys_make_a_whole_soul() -> None:
    whole = "version: 1\nmission: Serve.\nrisk_rules: {}\n"
    assert merged_soul_text(V1, whole) == whole


def test_a_diff_shows_one_line_around_each_change_and_no_reordering() -> None:
    active = yaml.safe_load(V1)
    reordered = yaml.safe_dump(dict(reversed(list(active.items()))), sort_keys=False)
    assert semantic_diff(V1, reordered) == "(no changes)"
    changed = merged_soul_text(V1, "approval_rules: {timeout_minutes: 45}")
    hunk = semantic_diff(V1, changed).split("\n")[2:]
    assert hunk[0].startswith("@@ ")
    assert [line[0] for line in hunk[1:]] == [" ", "-", "+", " "]


def test_what_is_no_mapping_or_no_yaml_is_refused_by_name() -> None:
    for text in ("[1, 2]", "just words", "42"):
        with pytest.raises(ValueError, match=r"^A soul change must be a YAML mapping of keys "):
            merged_soul_text(V1, text)
    with pytest.raises(ValueError, match=r"^That YAML does not parse: "):
        merged_soul_text(V1, "approval_rules: [")


def test_the_diff_ignores_layout_and_shows_what_changes() -> None:
    relaid = V1.replace("version: 1", "# a comment\nversion: 1", 1)
    assert semantic_diff(V1, relaid) == "(no changes)"
    changed = merged_soul_text(V1, "approval_rules: {timeout_minutes: 45}")
    diff = semantic_diff(V1, changed)
    assert diff.startswith("--- active\n+++ proposed\n@@ ")
    assert "-  timeout_minutes: 30\n+  timeout_minutes: 45" in diff


async def test_soul_shows_the_active_version_its_lint_timeout_and_mission(
    app: Lancelot, phone: MemoryChannel
) -> None:
    shown = await say(app, phone, "/soul")
    v1 = yaml.safe_load(V1)
    assert shown.kind is CardKind.REPLY
    assert shown.title == f"Soul v1: {v1['name']}"
    assert shown.body == v1["mission"].strip()
    assert shown.fields == (
        ("Version", "1"),
        ("Lint", "passes"),
        ("Approval timeout", "30 min"),
        ("Amendments waiting", "0"),
    )
    assert any(c.name == "soul" for c in app.commands.listing())


async def test_a_proposal_waits_until_it_is_activated_or_rejected(
    app: Lancelot, phone: MemoryChannel
) -> None:
    first = await say(app, phone, TIMEOUT_45)
    assert first.kind is CardKind.APPROVAL
    assert first.title == "Soul amendment PENDING"
    assert first.body.startswith("Against v1:\n--- active\n+++ proposed\n")
    assert [b.label for b in first.buttons] == ["Approve", "Reject"]
    assert await waiting(app, phone) == "1"
    approved = await tap(app, phone, first, "Approve")
    assert approved is not None
    assert approved.title == "Soul amendment APPROVED"
    assert approved.correlation_id == first.correlation_id  # the same message, edited
    assert await waiting(app, phone) == "1"
    rejected = await tap(app, phone, approved, "Reject")
    assert rejected is not None
    assert (rejected.kind, rejected.title, rejected.body) == (
        CardKind.NOTICE,
        "Amendment rejected",
        "The active soul is unchanged.",
    )
    assert await waiting(app, phone) == "0"
    assert dict((await say(app, phone, "/soul")).fields)["Approval timeout"] == "30 min"


async def test_a_pending_proposal_rejected_at_once(app: Lancelot, phone: MemoryChannel) -> None:
    card = await say(app, phone, TIMEOUT_45)
    rejected = await tap(app, phone, card, "Reject")
    assert rejected is not None
    assert rejected.title == "Amendment rejected"
    [receipt] = await receipt_of(app, "soul_amendment_rejected")
    [proposed] = await receipt_of(app, "soul_amendment_proposed")
    assert receipt["actor"] == "soul"
    assert receipt["inputs"] == proposed["inputs"]
    assert receipt["outputs"] == {"outcome": "rejected"}
    assert receipt["parent"] is not None
    assert receipt["parent"] != proposed["parent"]


async def test_each_step_leaves_a_receipt_under_what_caused_it(
    app: Lancelot, phone: MemoryChannel
) -> None:
    card = await say(app, phone, TIMEOUT_45)
    [proposed] = await receipt_of(app, "soul_amendment_proposed")
    assert proposed["actor"] == "soul"
    assert proposed["outputs"] == {"outcome": "PENDING"}
    assert proposed["status"] == ReceiptStatus.SUCCESS
    amendment_id = str(proposed["inputs"]["amendment_id"])  # type: ignore[index]
    assert card.correlation_id == f"soul-{amendment_id}"
    inbound = await app.ledger.get(str(proposed["parent"]))
    assert inbound is not None
    assert "timeout_minutes: 45" in inbound.inputs
    approved = await tap(app, phone, card, "Approve")
    assert approved is not None
    activated = await tap(app, phone, approved, "Activate")
    assert activated is not None
    assert (activated.kind, activated.body) == (
        CardKind.NOTICE,
        "The linter passed; the new rules apply from now on.",
    )
    assert activated.correlation_id == card.correlation_id
    [done] = await receipt_of(app, "soul_activated")
    assert done["inputs"] == {"amendment_id": amendment_id}
    assert done["outputs"] == {"outcome": "v2"}
    assert done["parent"] is not None
    shown = await say(app, phone, "/soul")
    assert dict(shown.fields)["Version"] == "2"
    assert shown.title.startswith("Soul v2: ")


async def test_an_amendment_overtaken_by_another_is_refused_and_recorded(
    app: Lancelot, phone: MemoryChannel
) -> None:
    first = await say(app, phone, TIMEOUT_45)
    second = await say(app, phone, "/soul propose approval_rules: {timeout_minutes: 50}")
    first_ok = await tap(app, phone, first, "Approve")
    second_ok = await tap(app, phone, second, "Approve")
    assert first_ok is not None
    assert second_ok is not None
    assert (await tap(app, phone, first_ok, "Activate")) is not None
    refused = await tap(app, phone, second_ok, "Activate")
    assert refused is not None
    assert (refused.kind, refused.title) == (CardKind.NOTICE, "Amendment not applied")
    assert "was written against v1, but v2 is active now" in refused.body
    assert refused.correlation_id == second.correlation_id
    [receipt] = await receipt_of(app, "soul_amendment_refused")
    assert receipt["status"] == ReceiptStatus.REFUSED
    assert receipt["outputs"] == {"outcome": refused.body}
    assert dict((await say(app, phone, "/soul")).fields)["Approval timeout"] == "45 min"


async def test_a_proposal_with_nothing_or_no_mapping_gets_the_usage(
    app: Lancelot, phone: MemoryChannel
) -> None:
    for text in ("/soul propose", "/soul propose   "):
        card = await say(app, phone, text)
        assert (card.kind, card.title, card.body) == (CardKind.REPLY, "Usage", USAGE)
        assert "either a whole soul, or just the keys to change" in card.body
        assert card.body.endswith("\n/soul propose approval_rules: {timeout_minutes: 45}")
    for text, reason in (
        ("[1, 2]", "A soul change must be a YAML mapping of keys to new values."),
        ("approval_rules: [", "That YAML does not parse: "),
    ):
        card = await say(app, phone, f"/soul propose {text}")
        assert (card.kind, card.title) == (CardKind.REPLY, "Not a soul change")
        assert card.body.startswith(reason)
        assert card.body.endswith(f"\n\n{USAGE}")
    assert await receipt_of(app, "soul_amendment_proposed") == ()


async def test_a_change_the_linter_refuses_lists_every_finding(
    app: Lancelot, phone: MemoryChannel
) -> None:
    change = (
        "scheduling_boundaries:\n  allow_autonomous_irreversible: true\n"
        "forbid_silent_degradation: false"
    )
    card = await say(app, phone, f"/soul propose {change}")
    assert (card.kind, card.title) == (CardKind.REPLY, "Amendment rejected by the linter")
    assert not card.buttons
    [proposed] = await receipt_of(app, "soul_amendment_proposed")
    assert proposed["outputs"] == {"outcome": "REJECTED"}
    findings = [line.split(": ")[0] for line in card.body.split("\n")]
    assert findings == ["CRITICAL no-silent-degradation", "CRITICAL no-autonomous-irreversible"]


async def test_no_change_says_which_version_already_says_it(
    app: Lancelot, phone: MemoryChannel
) -> None:
    card = await say(app, phone, "/soul propose approval_rules: {timeout_minutes: 30}")
    assert (card.kind, card.title) == (CardKind.REPLY, "No change")
    assert card.body == (f"That is what soul v1 already says: nothing to approve.\n\n{USAGE}")


async def test_the_card_weighs_the_amendment_against_the_recorded_history(
    app: Lancelot, phone: MemoryChannel
) -> None:
    card = await say(app, phone, TIMEOUT_45)
    sentence = "Over the last 30 days no decision was recorded that this could change."
    assert card.body.endswith(f"\n\n{sentence}")
    assert [b.label for b in card.buttons] == ["Approve", "Reject"]  # no page, no link
    approved = await tap(app, phone, card, "Approve")
    assert approved is not None
    assert approved.body.endswith(f"\n\n{sentence}")


async def test_a_soul_file_broken_on_disk_after_loading_shows_its_lint_failing(
    app: Lancelot, phone: MemoryChannel
) -> None:
    card = await say(app, phone, TIMEOUT_45)
    approved = await tap(app, phone, card, "Approve")
    assert approved is not None
    assert await tap(app, phone, approved, "Activate") is not None
    v2 = app.home / "soul" / "soul_v2.yaml"
    broken = "allow_autonomous_irreversible: true"
    v2.write_text(v2.read_text(encoding="utf-8").replace(broken.replace("true", "false"), broken))
    fields = dict((await say(app, phone, "/soul")).fields)
    assert (fields["Version"], fields["Lint"]) == ("2", "FAILS")


async def test_a_broken_pointer_is_named_under_the_mission(settings: Settings) -> None:
    (settings.home / "soul").mkdir(parents=True)
    (settings.home / "soul" / "ACTIVE").write_text("seven\n", encoding="utf-8")
    async with assemble(settings) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        shown = await say(app, phone, "/soul")
    mission, note = shown.body.split("\n\nNote: ")
    assert mission == yaml.safe_load(V1)["mission"].strip()
    assert note.startswith(str(settings.home / "soul" / "ACTIVE"))
    assert note.endswith("not hold a version number (found 'seven'); using the newest valid v1")
    assert dict(shown.fields)["Lint"] == "passes"


async def test_status_shows_the_soul_the_keeper_holds(app: Lancelot, phone: MemoryChannel) -> None:
    assert dict((await say(app, phone, "/status")).fields)["Soul"] == "v1"
    card = await say(app, phone, TIMEOUT_45)
    approved = await tap(app, phone, card, "Approve")
    assert approved is not None
    assert await tap(app, phone, approved, "Activate") is not None
    assert dict((await say(app, phone, "/status")).fields)["Soul"] == "v2"


async def test_help_names_soul_and_how_to_amend(app: Lancelot, phone: MemoryChannel) -> None:
    listed = (await say(app, phone, "/help")).body.splitlines()
    assert "/soul [propose <yaml>] - the constitution; /soul propose <yaml> to amend it" in listed


async def test_a_long_change_shows_its_diff_cut_at_3000_characters(
    app: Lancelot, phone: MemoryChannel
) -> None:
    mission = " ".join(f"Rule {n}, serve the owner well." for n in range(200))
    card = await say(app, phone, f"/soul propose mission: {mission}")
    assert card.kind is CardKind.APPROVAL
    sentence = "Over the last 30 days no decision was recorded that this could change."
    diff = card.body.removeprefix("Against v1:\n").removesuffix(f"\n\n{sentence}")
    assert len(diff) == 3000
    assert diff.startswith("--- active\n+++ proposed\n")


@pytest.mark.app(web=True, env={"LANCELOT_WEB_PORT": "0"})
async def test_a_served_receipt_page_adds_the_list_of_changes(
    app: Lancelot, phone: MemoryChannel
) -> None:
    card = await say(app, phone, TIMEOUT_45)
    assert [b.label for b in card.buttons] == ["Approve", "Reject", "See the list"]
    link = card.buttons[-1].url
    assert link is not None
    assert link.endswith(f"/receipts/whatif/{card.correlation_id.removeprefix('soul-')}")


def own_commands(
    app: Lancelot, what_if: Callable[[Soul, int], Awaitable[WhatIf]] | None
) -> SoulCommands:
    """/soul over `app`'s home, ledger and tokens, weighing amendments with `what_if`."""
    keeper = SoulKeeper(SoulStore(SHIPPED_VERSIONS_DIR, app.home / "soul"))
    return SoulCommands(CommandRegistry(), keeper, app.tokens, app.ledger, what_if)


async def propose(commands: SoulCommands, change: str) -> Card | None:
    """The card /soul propose `change` answers with."""
    event = Inbound("console", OWNER, CHAT, f"/soul propose {change}")
    return await commands.soul(CommandContext(event, f"propose {change}", "inbound"))


async def test_without_history_to_weigh_the_card_shows_the_diff_alone(app: Lancelot) -> None:
    card = await propose(own_commands(app, None), "approval_rules: {timeout_minutes: 45}")
    assert card is not None
    assert card.body.endswith("+  timeout_minutes: 45\n autonomy_posture:")
    assert [b.label for b in card.buttons] == ["Approve", "Reject"]


async def test_a_ledger_that_cannot_be_read_is_named_on_the_card(
    app: Lancelot, tmp_path: Path
) -> None:
    async def unreadable(proposed: Soul, days: int) -> WhatIf:
        return what_if_recorded(tmp_path, proposed, days)  # a folder, not a ledger

    card = await propose(own_commands(app, unreadable), "approval_rules: {timeout_minutes: 45}")
    assert card is not None
    assert card.body.endswith(
        "\n+  timeout_minutes: 45\n autonomy_posture:\n\n"
        "What it would have changed could not be read from the receipts: disk I/O error"
    )
