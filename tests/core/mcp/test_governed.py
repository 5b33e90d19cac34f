"""MCP servers' tools governed end to end, through the assembled app with a scripted model
and real servers: a git server's log runs unasked and its commit asks first, with a card
saying which server does what with which arguments; a time server answers from the phone;
every call leaves an mcp_call receipt; results reach the model fenced as untrusted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.llm.types import Completion, CompletionRequest
from core.receipts.model import ReceiptStatus
from soul import SHIPPED_VERSIONS_DIR, SoulStore
from tests.core.mcp.conftest import program
from tests.core.mcp.stage import mcp_stage
from tests.core.mcp.test_servers import git_repository
from tests.core.tools.fences import fenced_body
from tests.fakes.owner import tap
from tests.fakes.scripted_model import call, final, tool_said

pytestmark = pytest.mark.timeout(180)

SLOW = 30.0  # a server runs in the request: room for a loaded machine


def commits(repo: Path) -> list[str]:
    done = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%s"], capture_output=True, text=True, check=True
    )
    return done.stdout.split("\n")[:-1]


def git_server(repo: Path) -> dict[str, object]:
    return {"git": {"command": program("mcp-server-git"), "args": ["-r", str(repo)]}}


def offered(request: CompletionRequest) -> set[str]:
    return {spec.name for spec in request.tools}


async def test_a_git_servers_log_runs_unasked_and_is_fenced(tmp_path: Path) -> None:
    repo = git_repository(tmp_path / "repo")
    async with mcp_stage(tmp_path, git_server(repo)) as lancelot:
        seen: list[str] = []

        def answer(request: CompletionRequest) -> Completion:
            seen.append(tool_said(request)["output"])
            return final("Your last commit is 'first light'.", [("mcp__git__git_log", "log")])

        model = lancelot.model(call("mcp__git__git_log", repo_path=str(repo)), answer)
        card = await lancelot.say("what is the last commit of my repository?", SLOW)
        assert "first light" in card.body
        assert {"mcp__git__git_log", "mcp__git__git_commit"} <= offered(model.calls[0].request)
        assert "first light" in fenced_body(seen[0])  # the server's words, fenced
        (decision,) = await lancelot.receipts("policy_decision")
        assert decision.decoded("metadata")["tier"] == "T0"  # read-only, closed world
        (called,) = await lancelot.receipts("mcp_call")
        inputs = called.decoded("inputs")
        assert (inputs["server"], inputs["tool"]) == ("git", "git_log")
        assert inputs["arguments"] == {"repo_path": str(repo)}
        assert inputs["arguments_digest"].startswith("sha256:")
        assert called.decoded("outputs")["size"] > 0
        assert called.duration_ms is not None


async def test_a_git_servers_commit_asks_first_and_says_what_it_does(tmp_path: Path) -> None:
    repo = git_repository(tmp_path / "repo")
    (repo / "plan.txt").write_text("the plan\n")
    subprocess.run(["git", "-C", str(repo), "add", "plan.txt"], check=True)
    async with mcp_stage(tmp_path, git_server(repo)) as lancelot:
        lancelot.model(
            call("mcp__git__git_commit", repo_path=str(repo), message="second light"),
            final("Committed.", [("mcp__git__git_commit", "second light")]),
        )
        card = await lancelot.say("commit my repository with the message 'second light'", SLOW)
        assert card.title.startswith("Approve")
        assert "Lancelot cannot undo" in card.body
        assert "MCP server git runs its tool git_commit with:" in card.body
        assert "message = second light" in card.body
        assert f"repo_path = {repo}" in card.body
        assert commits(repo) == ["first light"]  # nothing ran before the tap
        assert await lancelot.receipts("mcp_call") == []
        await tap(lancelot.app, lancelot.phone, card, "Approve")
        await lancelot.next_card(SLOW)
        assert commits(repo) == ["second light", "first light"]
        (called,) = await lancelot.receipts("mcp_call")
        assert called.action_name == "git.git_commit"
        (decision,) = await lancelot.receipts("policy_decision")
        assert decision.decoded("metadata")["tier"] == "T2"


async def test_a_time_server_answers_from_the_phone(tmp_path: Path) -> None:
    servers = {"time": {"command": program("mcp-server-time")}}
    async with mcp_stage(tmp_path, servers) as lancelot:

        def answer(request: CompletionRequest) -> Completion:
            said = fenced_body(tool_said(request)["output"])
            assert '"timezone": "Asia/Tokyo"' in said, said
            hour = said.split('"datetime": "')[1][11:16]
            return final(f"It is {hour} in Tokyo.", [("mcp__time__get_current_time", "Asia/Tokyo")])

        lancelot.model(call("mcp__time__get_current_time", timezone="Asia/Tokyo"), answer)
        card = await lancelot.say("what time is it in Tokyo?", SLOW)
        assert card.body.startswith("It is ")
        assert card.body.endswith(" in Tokyo."), card.body
        assert dict(card.fields)["Ran"] == "mcp.time.get_current_time Asia/Tokyo"
        (called,) = await lancelot.receipts("mcp_call")
        assert called.status == ReceiptStatus.SUCCESS


async def test_a_call_that_carries_a_secret_keeps_only_its_digest(tmp_path: Path) -> None:
    servers = {"time": {"command": program("mcp-server-time")}}
    async with mcp_stage(tmp_path, servers) as lancelot:
        secret = "ghp_" + "FAKE" * 9
        lancelot.model(
            call("mcp__time__get_current_time", timezone=secret),
            final("That is no time zone.", [("mcp__time__get_current_time", "failed")]),
        )
        await lancelot.say("what time is it in my zone?", SLOW)
        (called,) = await lancelot.receipts("mcp_call")
        inputs = called.decoded("inputs")
        assert inputs["arguments"] == "withheld: they carry a secret"
        assert inputs["arguments_digest"].startswith("sha256:")
        assert secret not in called.inputs


async def test_a_write_outside_the_filesystem_servers_root_is_refused_and_recorded(
    tmp_path: Path, filesystem: list[str]
) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    outside = tmp_path / "outside.txt"
    servers = {"files": {"command": filesystem[0], "args": [filesystem[1], str(root)]}}
    async with mcp_stage(tmp_path, servers) as lancelot:
        lancelot.model(
            call("mcp__files__write_file", path=str(outside), content="hello"),
            final("Written.", [("mcp__files__write_file", str(outside))]),
        )
        card = await lancelot.say(f"write hello into {outside}", SLOW)
        assert card.title.startswith("Approve")  # a write: the owner is asked first
        assert f"path = {outside}" in card.body
        await tap(lancelot.app, lancelot.phone, card, "Approve")
        await lancelot.next_card(SLOW)
        edits = [edited.body for _, edited in lancelot.phone.edits]
        assert any("outside allowed directories" in body for body in edits)  # the server's
        assert not outside.exists()
        (called,) = await lancelot.receipts("mcp_call")
        assert called.status == ReceiptStatus.FAILURE
        assert called.decoded("outputs")["tool_error"] is True
        assert "outside allowed directories" in (called.error_message or "")


async def test_the_soul_lowers_a_servers_tool_so_it_runs_unasked(tmp_path: Path) -> None:
    repo = git_repository(tmp_path / "repo")
    (repo / "plan.txt").write_text("the plan\n")
    subprocess.run(["git", "-C", str(repo), "add", "plan.txt"], check=True)
    store = SoulStore(SHIPPED_VERSIONS_DIR, tmp_path / "home" / "soul")
    text = store.text(store.active_version()).replace("version: 1\n", "version: 2\n", 1)
    text = text.replace("  effects:\n", "  mcp:\n    git: {git_commit: T1}\n  effects:\n", 1)
    store.activate(2, text=text)
    async with mcp_stage(tmp_path, git_server(repo)) as lancelot:
        lancelot.model(
            call("mcp__git__git_commit", repo_path=str(repo), message="second light"),
            final("Committed.", [("mcp__git__git_commit", "second light")]),
        )
        card = await lancelot.say("commit my repository with the message 'second light'", SLOW)
        assert card.title == "Done"
        assert commits(repo) == ["second light", "first light"]
        (decision,) = await lancelot.receipts("policy_decision")
        assert decision.decoded("metadata")["tier"] == "T1"
