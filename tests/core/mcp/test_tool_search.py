"""Many MCP tools, small prompts, through the assembled app with real servers and a scripted
model: past `mcp.offer_all_up_to` tools the model is offered find_tools instead of them all,
a search offers what it found from the next turn on, and a found tool's call is governed as
before (its tier, its card, its receipts)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.llm.types import Completion, CompletionRequest
from core.receipts.model import ReceiptStatus
from tests.core.agent.stage import Stage
from tests.core.mcp.conftest import program
from tests.core.mcp.stage import mcp_stage
from tests.core.mcp.test_governed import SLOW, commits, git_server, offered
from tests.core.mcp.test_servers import git_repository
from tests.fakes.owner import tap
from tests.fakes.scripted_model import call, final, tool_said

pytestmark = pytest.mark.timeout(180)

CROWDED = {"LANCELOT_MCP_OFFER_ALL_UP_TO": "3"}  # git's dozen tools and time's two: crowded


def servers(repo: Path) -> dict[str, object]:
    return {**git_server(repo), "time": {"command": program("mcp-server-time")}}


async def decided_tiers(lancelot: Stage) -> dict[str, str]:
    """The tier governance decided for each capability the request used."""
    decisions = await lancelot.receipts("policy_decision")
    return {
        d.decoded("inputs")["command"].split(" ")[0]: d.decoded("metadata")["tier"]
        for d in decisions
    }


def mcp_offered(request: CompletionRequest) -> set[str]:
    return {name for name in offered(request) if name.startswith("mcp__")}


async def test_a_crowded_table_offers_find_tools_and_then_what_it_found(tmp_path: Path) -> None:
    repo = git_repository(tmp_path / "repo")
    async with mcp_stage(tmp_path, servers(repo), environ=CROWDED) as lancelot:
        told: list[str] = []

        def after_search(request: CompletionRequest) -> Completion:
            told.append(tool_said(request)["output"])
            return call("mcp__time__get_current_time", timezone="Asia/Tokyo")

        model = lancelot.model(
            call("find_tools", query="current time in a time zone"),
            after_search,
            final("It is late in Tokyo.", [("mcp__time__get_current_time", "Asia/Tokyo")]),
        )
        card = await lancelot.say("what time is it in Tokyo?", SLOW)
        assert card.body == "It is late in Tokyo."
        first, second, _ = (c.request for c in model.calls if c.task_type == "agent")
        assert "find_tools" in offered(first)
        assert mcp_offered(first) == set()  # none of the 14 tools' schemas
        assert "mcp__time__get_current_time" in mcp_offered(second)
        assert "mcp__git__git_commit" not in mcp_offered(second)  # not what was searched
        assert "mcp__time__get_current_time" in told[0]
        tiers = await decided_tiers(lancelot)
        assert tiers["tools.find"] == "T0"
        (called,) = await lancelot.receipts("mcp_call")
        assert called.action_name == "time.get_current_time"
        assert called.status == ReceiptStatus.SUCCESS


async def test_a_found_tool_that_changes_things_still_asks_first(tmp_path: Path) -> None:
    repo = git_repository(tmp_path / "repo")
    (repo / "plan.txt").write_text("the plan\n")
    subprocess.run(["git", "-C", str(repo), "add", "plan.txt"], check=True)
    async with mcp_stage(tmp_path, servers(repo), environ=CROWDED) as lancelot:
        lancelot.model(
            call("find_tools", query="git commit"),
            call("mcp__git__git_commit", repo_path=str(repo), message="second light"),
            final("Committed.", [("mcp__git__git_commit", "second light")]),
        )
        card = await lancelot.say("commit my repository with the message 'second light'", SLOW)
        assert card.title.startswith("Approve")
        assert "MCP server git runs its tool git_commit with:" in card.body
        assert commits(repo) == ["first light"]  # nothing ran before the tap
        await tap(lancelot.app, lancelot.phone, card, "Approve")
        await lancelot.next_card(SLOW)
        assert commits(repo) == ["second light", "first light"]
        tiers = await decided_tiers(lancelot)
        assert tiers["mcp.git.git_commit"] == "T2"
        (called,) = await lancelot.receipts("mcp_call")
        assert called.action_name == "git.git_commit"


async def test_a_search_that_matches_nothing_offers_nothing_more(tmp_path: Path) -> None:
    repo = git_repository(tmp_path / "repo")
    async with mcp_stage(tmp_path, servers(repo), environ=CROWDED) as lancelot:
        told: list[str] = []

        def after_search(request: CompletionRequest) -> Completion:
            told.append(tool_said(request)["output"])
            return final("I have no tool for that.")

        model = lancelot.model(call("find_tools", query="weather forecast"), after_search)
        await lancelot.say("will it rain tomorrow?", SLOW)
        assert "No tool matched 'weather forecast'" in told[0]
        agent_calls = [c.request for c in model.calls if c.task_type == "agent"]
        assert mcp_offered(agent_calls[-1]) == set()
