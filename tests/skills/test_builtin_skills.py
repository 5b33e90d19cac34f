"""The shipped SYSTEM skills, run from chat through governance."""

from __future__ import annotations

import json
import subprocess

from bot.app import Lancelot
from core.events import CardKind
from tests.core.skills.builder import receipts, registry_of
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap


def outputs_of(body: str) -> dict[str, object]:
    return dict(json.loads(body[body.index("{") :]))


async def test_command_runner_refuses_denylisted_and_asks_for_destructive(
    app: Lancelot, phone: MemoryChannel
) -> None:
    denied = await say(app, phone, '/skills run command_runner {"command": "rm -rf /"}')
    assert outputs_of(denied.body)["status"] == "denied"
    assert "Not allowed (rule deny-rm-root)" in denied.body
    (app.home / "workspace" / "old").mkdir()
    approval = await say(
        app, phone, '/skills run command_runner {"command": "rm -r /workspace/old"}'
    )
    assert approval.kind is CardKind.APPROVAL
    _, answer = await phone.next_card()
    assert answer.title == "Skill command_runner: waiting for your approval"
    await tap(app, phone, approval, "Approve")
    assert not (app.home / "workspace" / "old").exists()


async def test_repo_writer_writes_then_says_plainly_when_it_cannot_commit(
    app: Lancelot, phone: MemoryChannel
) -> None:
    card = await say(
        app, phone, '/skills run repo_writer {"path": "a.txt", "content": "x", "message": "add"}'
    )
    assert card.title == "Skill repo_writer: failed"
    assert "a.txt was written but not committed" in card.body
    assert "not a git repository" in card.body
    assert outputs_of(card.body)["written"] is True
    assert outputs_of(card.body)["committed"] is False
    assert (app.home / "workspace" / "a.txt").read_text() == "x"


async def test_repo_writer_writes_and_commits_in_a_repository(
    app: Lancelot, phone: MemoryChannel
) -> None:
    workspace = app.home / "workspace"
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    card = await say(
        app,
        phone,
        '/skills run repo_writer {"path": "notes.md", "content": "hello", "message": "Add notes"}',
    )
    log = subprocess.run(
        ["git", "-C", str(workspace), "log", "--format=%s", "--name-only"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert outputs_of(card.body)["committed"] is True, card.body
    assert log.stdout.split() == ["Add", "notes", "notes.md"]


async def test_network_client_with_the_network_switched_off(
    app: Lancelot, phone: MemoryChannel
) -> None:
    card = await say(app, phone, '/skills run network_client {"url": "http://127.0.0.1:9/"}')
    assert outputs_of(card.body)["status"] != "done"
    assert "FEATURE_TOOLS_NETWORK" in card.body


async def test_service_runner_runs_only_the_configured_command(
    app: Lancelot, phone: MemoryChannel
) -> None:
    unconfigured = await say(app, phone, "/skills run service_runner")
    assert unconfigured.title == "Skill service_runner: failed"
    assert "no service command is configured" in unconfigured.body
    await registry_of(app).configure("service_runner", {"command": "echo service up"})
    card = await say(app, phone, "/skills run service_runner")
    assert card.title == "Skill service_runner: done"
    assert outputs_of(card.body)["exit_code"] == 0
    assert "service up" in str(outputs_of(card.body)["output"])
    [tool_run] = await receipts(app, "tool_run")
    [skill_run] = [r for r in await receipts(app, "skill_run") if r.status == "success"]
    assert tool_run.parent_id == skill_run.id


async def test_a_skill_cannot_vouch_that_it_overwrites_nothing(
    app: Lancelot, phone: MemoryChannel
) -> None:
    """Governance looks at the file itself: writing over one is an overwrite (T3), above
    the T2 risk repo_writer declares, whatever facts the skill put in its action."""
    (app.home / "workspace" / "kept.txt").write_text("the owner's words\n")
    card = await say(
        app, phone, '/skills run repo_writer {"path": "kept.txt", "content": "x", "message": ""}'
    )
    assert card.title == "Skill repo_writer: failed"
    assert "a T3 action is above the T2 risk repo_writer declares" in card.body
    assert (app.home / "workspace" / "kept.txt").read_text() == "the owner's words\n"
