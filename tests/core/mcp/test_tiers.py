"""A tool's tier from the phone: /mcp has a tool ask first or run without asking, with a
signed single-use button; the choice is a receipt, is kept across restarts, and governs the
next call, never below what the Soul's `risk_rules.mcp` says."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from core.agent.mcp_commands import SET_TIER
from core.events import ButtonPress
from core.receipts.model import ReceiptStatus
from soul import SHIPPED_VERSIONS_DIR, SoulStore
from tests.core.agent.stage import Stage
from tests.core.mcp.stage import mcp_stage, settled
from tests.core.mcp.test_governed import SLOW, commits, git_server
from tests.core.mcp.test_servers import git_repository
from tests.fakes.owner import CHAT, OWNER, tap
from tests.fakes.scripted_model import call, final

pytestmark = pytest.mark.timeout(180)


def staged(tmp_path: Path) -> Path:
    repo = git_repository(tmp_path / "repo")
    (repo / "plan.txt").write_text("the plan\n")
    subprocess.run(["git", "-C", str(repo), "add", "plan.txt"], check=True)
    return repo


def soul_says(tmp_path: Path, mcp: str) -> None:
    """Activate a Soul whose `risk_rules.mcp` is `mcp` (YAML flow mapping)."""
    store = SoulStore(SHIPPED_VERSIONS_DIR, tmp_path / "home" / "soul")
    text = store.text(store.active_version()).replace("version: 1\n", "version: 2\n", 1)
    text = text.replace("  effects:\n", f"  mcp: {mcp}\n  effects:\n", 1)
    store.activate(2, text=text)


async def commit(lancelot: Stage, repo: Path, message: str) -> str:
    """Ask for a commit; the title of the card that comes back."""
    lancelot.model(
        call("mcp__git__git_commit", repo_path=str(repo), message=message),
        final("Committed.", [("mcp__git__git_commit", message)]),
    )
    card = await lancelot.say(f"commit my repository with the message '{message}'", SLOW)
    return card.title


async def test_the_owner_has_a_tool_run_unasked_and_it_is_kept(tmp_path: Path) -> None:
    repo = staged(tmp_path)
    async with mcp_stage(tmp_path, git_server(repo)) as lancelot:
        card = await lancelot.say("/mcp git", SLOW)
        assert "  git_commit: on, T2, asks you first" in card.body
        edited = await tap(lancelot.app, lancelot.phone, card, "Run git_commit unasked")
        assert edited is not None
        assert "  git_commit: on, T1, runs without asking (your choice)" in edited.body
        assert "git's git_commit runs without asking (T1), kept across restarts." in edited.body
        assert "Ask before git_commit" in [b.label for b in edited.buttons]
        assert await commit(lancelot, repo, "second light") == "Done"  # no card asked
        assert commits(repo) == ["second light", "first light"]
        (chosen,) = await lancelot.receipts("mcp_tier_chosen")
        assert chosen.action_name == "git.git_commit"
        assert chosen.decoded("outputs")["tier"] == "T1"
        kept = json.loads((tmp_path / "home" / "mcp_choices.json").read_text())
        assert kept["tiers"] == {"git": {"git_commit": "T1"}}
        await lancelot.restart()  # the same home
        await settled(lancelot, "git")
        card = await lancelot.say("/mcp git", SLOW)
        assert "  git_commit: on, T1, runs without asking (your choice)" in card.body
        (repo / "plan.txt").write_text("the plan, again\n")
        subprocess.run(["git", "-C", str(repo), "add", "plan.txt"], check=True)
        await lancelot.say("/new")  # the first commit's answer was a server's: start afresh
        assert await commit(lancelot, repo, "third light") == "Done"
        assert commits(repo)[0] == "third light"


async def test_a_tool_raised_to_ask_first_asks_even_for_a_call_that_ran(tmp_path: Path) -> None:
    repo = git_repository(tmp_path / "repo")
    async with mcp_stage(tmp_path, git_server(repo)) as lancelot:
        log = call("mcp__git__git_log", repo_path=str(repo))
        lancelot.model(log, final("Read it.", [("mcp__git__git_log", "log")]))
        assert (await lancelot.say("show my log", SLOW)).title == "Done"
        card = await lancelot.say("/mcp git", SLOW)
        await tap(lancelot.app, lancelot.phone, card, "Ask before git_log")
        lancelot.model(call("mcp__git__git_log", repo_path=str(repo)), final("Asked."))
        asked = await lancelot.say("show my log again", SLOW)
        assert asked.title.startswith("Approve")
        assert len(await lancelot.receipts("mcp_call")) == 1  # the second waits for a tap


async def test_the_soul_keeps_a_tool_asking_whatever_the_phone_says(tmp_path: Path) -> None:
    repo = staged(tmp_path)
    soul_says(tmp_path, "{git: {git_commit: T2}}")
    async with mcp_stage(tmp_path, git_server(repo)) as lancelot:
        card = await lancelot.say("/mcp git", SLOW)
        assert "  git_commit: on, T2, asks you first (the Soul says so)" in card.body
        assert "Run git_commit unasked" not in [b.label for b in card.buttons]
        # A button signed before the Soul said so still cannot lower it.
        payload = {"server": "git", "tool": "git_commit", "tier": "T1"}
        token = await lancelot.app.tokens.issue(SET_TIER, payload, card.correlation_id)
        ref = next(
            r for r, c in lancelot.phone.delivered if c.correlation_id == card.correlation_id
        )
        await lancelot.app.bus.publish(ButtonPress(lancelot.phone.name, OWNER, CHAT, ref, token))
        await lancelot.app.bus.drained()
        assert "The Soul says git's git_commit runs at T2" in lancelot.phone.edits[-1][1].body
        (refused,) = await lancelot.receipts("mcp_tier_chosen")
        assert refused.status == ReceiptStatus.REFUSED
        assert await commit(lancelot, repo, "second light") != "Done"
        assert commits(repo) == ["first light"]


async def test_a_forged_or_replayed_tier_button_does_nothing(tmp_path: Path) -> None:
    repo = staged(tmp_path)
    async with mcp_stage(tmp_path, git_server(repo)) as lancelot:
        card = await lancelot.say("/mcp git", SLOW)
        await tap(lancelot.app, lancelot.phone, card, "Run git_commit unasked")
        edited = lancelot.phone.edits[-1][1]
        await tap(lancelot.app, lancelot.phone, edited, "Ask before git_commit")
        ref = next(
            r for r, c in lancelot.phone.delivered if c.correlation_id == card.correlation_id
        )
        spent = next(b.action_token for b in card.buttons if b.label == "Run git_commit unasked")
        unsigned_tier = {"server": "git", "tool": "git_commit", "tier": "T9"}
        odd = await lancelot.app.tokens.issue(SET_TIER, unsigned_tier, card.correlation_id)
        for token in (spent, "A" * 32, odd):
            await lancelot.app.bus.publish(
                ButtonPress(lancelot.phone.name, OWNER, CHAT, ref, token)
            )
        await lancelot.app.bus.drained()
        refused = await lancelot.receipts("button_refused")
        assert sorted(r.action_name for r in refused) == ["already used", "forged"]
        assert "No MCP tool git.git_commit now." in lancelot.phone.edits[-1][1].body  # T9
        assert len(await lancelot.receipts("mcp_tier_chosen")) == 2  # the two real taps
        assert await commit(lancelot, repo, "second light") != "Done"  # asks again
