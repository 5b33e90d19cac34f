"""The pure decision (`decide(inputs, soul)`): the denylist, the Soul's rules or a tool's
own tier, an MCP server's change, a dry run's effects, and what settles asked or allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.governance.deciding import crusader_approves, decide
from core.governance.decision import Decision, DecisionInputs, Verdict
from soul import SHIPPED_VERSIONS_DIR, Action, Soul, SoulStore, Tier

SOUL = SoulStore(SHIPPED_VERSIONS_DIR, Path("/nonexistent-state")).load_active()
GIT_LOG = "mcp.git.git_log"  # an MCP server's tool, as core/mcp/naming.py spells it


def decided(
    action: Action,
    soul: Soul = SOUL,
    *,
    tool_tier: Tier | None = None,
    chosen_tier: Tier | None = None,
    effects: tuple[str, ...] | None = None,
    autonomous: bool = False,
    crusader: bool = False,
    ask: str | None = None,
) -> Decision:
    """`decide` on these inputs; the Soul's version and digest are not read by it."""
    inputs = DecisionInputs(
        action, soul.version, "digest", 0.0, autonomous=autonomous, crusader=crusader,
        tool_tier=tool_tier, chosen_tier=chosen_tier, effects=effects, ask=ask,
    )  # fmt: skip
    return decide(inputs, soul)


def shell(command: str, **facts: bool) -> Action:
    return Action("shell.exec", command, **facts)  # type: ignore[arg-type]


def with_mcp(mcp: dict[str, dict[str, Tier]]) -> Soul:
    """The shipped Soul with `risk_rules.mcp` set."""
    return SOUL.model_copy(update={"risk_rules": SOUL.risk_rules.model_copy(update={"mcp": mcp})})


def test_an_unparseable_command_is_refused_with_a_way_to_write_it() -> None:
    decision = decided(shell("echo 'unbalanced"))
    assert (decision.verdict, decision.tier) == (Verdict.DENY, "T3")
    assert decision.rules == ("unparseable-command",)
    assert decision.reason == "cannot read the command: a ' is not closed"
    (hint,) = decision.alternatives
    assert hint == "Write the command without unbalanced quotes or deep nesting."


def test_a_tool_the_soul_names_no_rule_for_runs_at_its_own_tier() -> None:
    browse = Action("browser.open")
    assert decided(browse, tool_tier="T0").tier == "T0"
    assert decided(browse, tool_tier="T3").verdict is Verdict.NEEDS_APPROVAL
    assert decided(browse).tier == "T2"  # no tier declared: the Soul's default


def test_a_capability_the_soul_rules_on_keeps_the_souls_default_over_the_tools_tier() -> None:
    # net.request has rules (GET is T1, POST is T3); a method neither names falls to the
    # Soul's default tier, never to what the tool declares of itself.
    connect = Action("net.request", method="CONNECT")
    assert decided(connect, tool_tier="T0").tier == "T2"


@pytest.mark.parametrize(
    ("tier", "verdict"), [("T1", Verdict.ALLOW), ("T2", Verdict.NEEDS_APPROVAL)]
)
def test_an_mcp_servers_change_is_always_asked(tier: Tier, verdict: Verdict) -> None:
    decision = decided(Action(GIT_LOG), tool_tier=tier, crusader=True, autonomous=True)
    assert (decision.verdict, decision.tier) == (verdict, tier)
    if verdict is Verdict.NEEDS_APPROVAL:
        assert decision.reason == (
            f"{tier} action needs your approval: Lancelot cannot undo what an MCP server does"
        )


def test_the_souls_mcp_entry_governs_over_the_tools_annotations() -> None:
    soul = with_mcp({"git": {"git_log": "T2"}})
    assert decided(Action(GIT_LOG), soul, tool_tier="T0").verdict is Verdict.NEEDS_APPROVAL


def test_a_tool_no_server_offers_now_takes_the_souls_entry_whatever_was_chosen() -> None:
    soul = with_mcp({"git": {"git_log": "T0"}})
    assert decided(Action(GIT_LOG), soul, chosen_tier="T3").tier == "T0"
    assert decided(Action("mcp.git.other"), soul, chosen_tier="T0").tier == "T2"  # default


def test_the_owners_choice_governs_an_mcp_tool_never_below_the_soul() -> None:
    plain = decided(Action(GIT_LOG), tool_tier="T1", chosen_tier="T0")
    assert (plain.verdict, plain.tier) == (Verdict.ALLOW, "T0")
    soul = with_mcp({"git": {"*": "T1"}})
    kept = decided(Action(GIT_LOG), soul, tool_tier="T0", chosen_tier="T0")
    assert kept.tier == "T1"


def test_an_effect_the_soul_cannot_judge_goes_to_the_owner_saying_why() -> None:
    decision = decided(shell("make", in_workspace=True), effects=("creates", "teleports"))
    assert (decision.verdict, decision.tier) == (Verdict.NEEDS_APPROVAL, "T3")
    assert decision.rules == ("effects.unknown",)
    assert decision.kinds == ("shell.exec",)  # a shell command's change, as any effect's
    assert decision.reason == "the Soul has no tier for the effect kind(s) teleports"


def test_a_dry_run_of_a_command_that_cannot_be_read_still_asks() -> None:
    decision = decided(shell("echo 'unbalanced", in_workspace=True), effects=("creates",))
    assert (decision.verdict, decision.tier) == (Verdict.NEEDS_APPROVAL, "T3")
    assert decision.rules == ("effects.creates", "unparseable-command")
    assert decision.kinds == ("effect.creates", "shell.exec")
    assert decision.reason == "T3 action needs your approval"


def test_the_rules_see_whether_the_dry_run_overwrote() -> None:
    over = decided(shell("mv a b"), effects=("overwrites",))
    assert "shell-move-over-existing" in over.rules
    assert "shell.destructive" in over.kinds
    moved = decided(shell("mv a b"), effects=("moves",))
    assert (moved.verdict, moved.tier) == (Verdict.ALLOW, "T1")
    assert "shell-move-new-name" in moved.rules


def test_crusader_mode_auto_approves_unprompted_t2_work_and_says_so() -> None:
    commit = shell("git commit -m nightly")
    waved = decided(commit, autonomous=True, crusader=True)
    assert (waved.verdict, waved.auto_approved) == (Verdict.ALLOW, True)
    assert waved.reason == "auto-approved in Crusader mode"
    asked = decided(commit, autonomous=True)
    assert (asked.verdict, asked.auto_approved) == (Verdict.NEEDS_APPROVAL, False)
    assert asked.reason == "T2 action needs your approval"


def test_a_reason_to_ask_makes_a_t3_question_of_anything_but_a_refusal() -> None:
    why = "the request read a web page"
    waved = decided(shell("git commit -m x"), autonomous=True, crusader=True, ask=why)
    assert (waved.verdict, waved.tier, waved.reason) == (Verdict.NEEDS_APPROVAL, "T3", why)
    assert not waved.auto_approved
    refused = decided(shell("rm -rf /"), ask=why)
    assert refused.verdict is Verdict.DENY
    assert refused.reason == "Deletes the whole filesystem or home directory."


def test_crusader_mode_never_waves_on_t3_even_where_the_soul_lists_it() -> None:
    reckless = SOUL.crusader.model_copy(update={"auto_approve_tiers": ("T1", "T2", "T3")})
    soul = SOUL.model_copy(update={"crusader": reckless})
    assert crusader_approves(soul, True, "T2")
    assert not crusader_approves(soul, True, "T3")


def test_inputs_that_say_nothing_of_autonomy_are_a_conversation_without_crusader() -> None:
    commit = shell("git commit -m x")
    assert decide(DecisionInputs(commit, 1, "d", 0.0), SOUL).verdict is Verdict.ALLOW
    unprompted = DecisionInputs(commit, 1, "d", 0.0, autonomous=True)
    assert decide(unprompted, SOUL).verdict is Verdict.NEEDS_APPROVAL
