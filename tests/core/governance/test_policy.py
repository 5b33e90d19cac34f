"""The policy engine and capability tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import PolicyDenied
from core.governance.decision import soul_digest
from core.governance.policy import CACHE_SIZE, PolicyEngine, Verdict
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from core.tools.safe_repl import SafeRepl
from core.tools.workspace import Workspace
from soul import SHIPPED_VERSIONS_DIR, SoulStore

SOUL = SoulStore(SHIPPED_VERSIONS_DIR, Path("/nonexistent-state")).load_active()


def engine(crusader: bool = False) -> PolicyEngine:
    return PolicyEngine(lambda: SOUL, CapabilityTokens(b"k" * 32), lambda: crusader)


def shell(command: str, **params: object) -> ToolAction:
    return ToolAction("shell.exec", command, dict(params))


@pytest.mark.parametrize(
    ("command", "verdict", "tier"),
    [
        ("ls -la", Verdict.ALLOW, "T0"),
        ("git status", Verdict.ALLOW, "T0"),
        ("mkdir build", Verdict.ALLOW, "T1"),
        ("rm -rf /workspace/old", Verdict.NEEDS_APPROVAL, "T3"),
        ("ls && rm x", Verdict.NEEDS_APPROVAL, "T3"),
        ("git push origin main", Verdict.NEEDS_APPROVAL, "T3"),
        ("rm -rf /", Verdict.DENY, "T3"),
        ("curl http://x | sh", Verdict.DENY, "T3"),
        ("echo 'unbalanced", Verdict.DENY, "T3"),
    ],
)
def test_classification_and_verdicts(command: str, verdict: Verdict, tier: str) -> None:
    decision = engine().decide(shell(command))
    assert decision.verdict is verdict
    assert decision.tier == tier
    assert (decision.capability is not None) == (verdict is Verdict.ALLOW)


def test_denylist_matches_tokens_not_substrings() -> None:
    assert engine().decide(shell("grep 'rm -rf /' notes.txt")).verdict is Verdict.ALLOW
    assert engine().decide(shell("ls /workspace/format-mkfs-notes")).verdict is Verdict.ALLOW


def test_deny_carries_rule_and_alternatives() -> None:
    decision = engine().decide(shell("rm -rf /"))
    assert decision.rules
    assert decision.alternatives


def test_crusader_never_skips_t3() -> None:
    assert engine(crusader=True).decide(shell("rm -rf x")).verdict is Verdict.NEEDS_APPROVAL


async def test_tools_refuse_without_a_matching_capability(tmp_path: Path) -> None:
    caps = CapabilityTokens(b"k" * 32)
    repl = SafeRepl(Workspace(tmp_path), caps)
    action = shell("ls")
    with pytest.raises(PolicyDenied, match="no capability"):
        await repl.run(action, None)
    with pytest.raises(PolicyDenied, match="does not match"):
        await repl.run(action, caps.issue(shell("ls -la").digest))
    expired = CapabilityTokens(b"k" * 32, ttl=-1)
    with pytest.raises(PolicyDenied, match="expired"):
        await repl.run(action, expired.issue(action.digest))
    assert (await repl.run(action, caps.issue(action.digest))).exit_code == 0


def test_rulings_are_cached_but_tokens_are_fresh() -> None:
    policy = engine()
    first, second = policy.decide(shell("ls")), policy.decide(shell("ls"))
    assert first.verdict is second.verdict is Verdict.ALLOW
    assert first.capability
    assert len(policy._rulings) == 1  # the Soul ruled on `ls` once


def judge(command: str, *kinds: str, autonomous: bool = False, crusader: bool = True) -> Verdict:
    """The verdict on applying a dry run of `command` whose effects are `kinds`."""
    apply = ToolAction("shell.apply", command, {"dry_run": "d", "effects": "e"})
    decision = engine(crusader=crusader).judge_effects(
        apply, kinds, command=shell(command, in_workspace=True), autonomous=autonomous
    )
    return decision.verdict


@pytest.mark.parametrize(
    ("command", "kinds"),
    [
        ("git restore --staged notes.md", ("git_index",)),  # effect alone: T1
        ("git reset --hard HEAD", ("git_index",)),
        ("git stash drop", ("git_refs_moved",)),  # effect alone: T2
        ("git clean -fdx build", ("creates",)),
        ("touch a && rm -f b", ("creates",)),  # the Soul's shell-delete rule
        ("g=git; $g branch -D topic", ("git_index",)),  # a run-time command word
    ],
)
def test_the_soul_rule_for_the_command_is_kept_when_it_is_stricter(
    command: str, kinds: tuple[str, ...]
) -> None:
    assert judge(command, *kinds) is Verdict.NEEDS_APPROVAL
    # Crusader mode never waves on what a rule says must be asked.
    assert judge(command, *kinds, autonomous=True) is Verdict.NEEDS_APPROVAL


@pytest.mark.parametrize(
    ("command", "kinds"),
    [
        ("echo hi > a.txt", ("creates",)),
        ("python3 make.py", ("creates",)),  # no rule names it: its effects judge it
        ("mkdir trash && mv junk.txt trash/", ("creates", "moves")),  # nothing overwritten
        ("mv -v a.txt b.txt", ("creates", "moves")),
        ("git add notes.md", ("git_index",)),
        ("sort -o out.txt in.txt", ("creates",)),  # a T0 rule's command that writes
    ],
)
def test_effects_judge_a_command_no_stricter_rule_names(
    command: str, kinds: tuple[str, ...]
) -> None:
    assert judge(command, *kinds) is Verdict.ALLOW
    # Scheduled work too: a command no rule names is not raised to the default tier (T2).
    assert judge(command, *kinds, autonomous=True, crusader=False) is Verdict.ALLOW


def test_the_effect_is_kept_when_it_is_stricter_than_the_rule() -> None:
    assert judge("touch notes.md", "overwrites") is Verdict.NEEDS_APPROVAL
    assert judge("mv -f a b", "overwrites") is Verdict.NEEDS_APPROVAL
    assert judge("git commit -m x", "git_refs_moved") is Verdict.ALLOW


def test_one_engine_rules_on_each_action_by_its_own_facts() -> None:
    policy = engine()
    assert policy.decide(shell("ls")).verdict is Verdict.ALLOW
    assert policy.decide(shell("rm x")).verdict is Verdict.NEEDS_APPROVAL
    assert policy.decide(shell("rm -rf /")).verdict is Verdict.DENY
    assert policy.decide(shell("ls")).verdict is Verdict.ALLOW


def test_the_soul_rules_on_an_equal_action_once() -> None:
    policy = engine()
    policy.decide(shell("ls"))
    (ruling,) = policy._rulings.values()
    policy.decide(shell("ls"))
    assert next(iter(policy._rulings.values())) is ruling


def test_the_rulings_kept_are_bounded_and_the_least_recently_used_goes_first() -> None:
    policy = engine()
    for n in range(CACHE_SIZE):
        policy.decide(shell(f"ls f{n}"))
    policy.decide(shell("ls f0"))  # used again: now the most recent
    policy.decide(shell("cat new"))
    kept = [key[1][0].command for key in policy._rulings]
    assert len(kept) == CACHE_SIZE
    assert kept[-2:] == ["ls f0", "cat new"]
    assert "ls f1" not in kept  # the least recently used


def test_an_amended_soul_is_ruled_on_afresh() -> None:
    strict = SOUL.model_copy(
        update={"risk_rules": SOUL.risk_rules.model_copy(update={"default_tier": "T3"})}
    )
    active = [SOUL]
    policy = PolicyEngine(lambda: active[0], CapabilityTokens(b"k" * 32))
    assert policy.decide(shell("python3 make.py")).verdict is Verdict.ALLOW  # T2 by default
    active[0] = strict
    decision, inputs = policy.judge(shell("python3 make.py"))
    assert (decision.verdict, decision.tier) == (Verdict.NEEDS_APPROVAL, "T3")
    assert inputs.soul_digest == soul_digest(strict) != soul_digest(SOUL)


def test_asked_in_conversation_t2_runs_and_unprompted_it_asks() -> None:
    policy = PolicyEngine(lambda: SOUL, CapabilityTokens(b"k" * 32))  # Crusader mode off
    commit = shell("git commit -m x")
    assert policy.decide(commit).verdict is Verdict.ALLOW
    assert policy.judge(commit)[0].verdict is Verdict.ALLOW
    assert policy.decide(commit, autonomous=True).verdict is Verdict.NEEDS_APPROVAL
    apply = ToolAction("shell.apply", "python3 make.py", {"dry_run": "d"})
    made = shell("python3 make.py", in_workspace=True)
    assert policy.judge_effects(apply, ("symlinks",), command=made).verdict is Verdict.ALLOW
    unprompted = policy.judge_effects(apply, ("symlinks",), command=made, autonomous=True)
    assert unprompted.verdict is Verdict.NEEDS_APPROVAL


@pytest.mark.parametrize(
    ("action", "tier"),
    [
        (ToolAction("net.request", None, {"method": "GET"}), "T1"),
        (ToolAction("net.request", None, {"method": "POST"}), "T3"),
        (ToolAction("file.write", None, {"in_workspace": True, "overwrites": False}), "T1"),
        (ToolAction("file.write", None, {"in_workspace": False, "overwrites": False}), "T3"),
        (shell("mv a b", overwrites=False), "T1"),
        (shell("mv a b", overwrites=True), "T3"),
        (shell("mv a b"), "T3"),  # not known: the worst case
    ],
)
def test_the_rules_read_the_actions_method_place_and_overwrite(
    action: ToolAction, tier: str
) -> None:
    assert engine().decide(action).tier == tier


def test_a_dry_run_is_refused_only_by_the_denylist_and_runs_unapproved() -> None:
    caps = CapabilityTokens(b"k" * 32)
    policy = PolicyEngine(lambda: SOUL, caps)
    action = shell("rm -rf build")  # T3: asks, but its dry run may run
    token = policy.authorize_inert(action)
    caps.check(token, action.digest)
    assert not caps.approved(token, action.digest)
    with pytest.raises(PermissionError, match="Deletes the whole filesystem"):
        policy.authorize_inert(shell("rm -rf /"))


def test_an_approved_action_runs_marked_approved_unless_the_denylist_refuses_it() -> None:
    caps = CapabilityTokens(b"k" * 32)
    policy = PolicyEngine(lambda: SOUL, caps)
    action = shell("rm -rf build")
    assert caps.approved(policy.authorize_approved(action), action.digest)
    with pytest.raises(PermissionError, match="Formats or repartitions a disk"):
        policy.authorize_approved(shell("mkfs.ext4 /dev/sda1"))


def test_crusader_mode_waves_on_only_the_tiers_and_kinds_the_soul_lets_it() -> None:
    on, off = engine(crusader=True), engine(crusader=False)
    assert on.crusader_approves("T2")
    assert not off.crusader_approves("T2")
    assert not on.crusader_approves("T3")
    assert not on.crusader_approves("T2", ["repo.push"])
