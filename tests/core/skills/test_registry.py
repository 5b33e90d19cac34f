"""The registry: shipped skills, install/enable/disable/uninstall with receipts, restarts,
and the limits on marketplace skills."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import Lancelot, assemble
from core.config import Settings
from core.skills.api import ActionStatus
from core.skills.package import SignatureState
from core.skills.permissions import Permission
from core.skills.registry import Ownership, RegistryError
from core.skills.runner import RunStatus
from tests.core.skills.builder import ECHO, receipts, registry_of, runner_of, write_skill

SHELL_SKILL = """
from core.skills.api import SkillContext, ToolAction

async def run(ctx: SkillContext) -> None:
    outcome = await ctx.run(ToolAction("shell.exec", "ls /workspace", {"in_workspace": True}))
    ctx.write_output("text", f"{outcome.status}: {outcome.text}")
"""


async def test_shipped_skills_are_system_and_enabled(app: Lancelot) -> None:
    records = {r.name: r for r in await registry_of(app).all()}
    assert sorted(records) == ["command_runner", "network_client", "repo_writer", "service_runner"]
    assert {r.ownership for r in records.values()} == {Ownership.SYSTEM}
    assert all(r.enabled for r in records.values())
    assert {r.signature for r in records.values()} == {SignatureState.UNSIGNED}


async def test_lifecycle_persists_across_a_restart(settings: Settings, tmp_path: Path) -> None:
    source = write_skill(tmp_path / "src", "echo", ECHO)
    async with assemble(settings, web=False) as first:
        registry = registry_of(first)
        await registry.install(source, Ownership.USER, enabled=True)
        await registry.set_enabled("command_runner", False)
    async with assemble(settings, web=False) as second:
        records = {r.name: r for r in await registry_of(second).all()}
        assert records["echo"].ownership is Ownership.USER
        assert records["echo"].enabled
        assert records["echo"].path == second.home / "skills" / "echo"
        assert not records["command_runner"].enabled  # the owner's choice survives a restart
        await registry_of(second).uninstall("echo")
        assert not (second.home / "skills" / "echo").exists()
        kinds = [(r.action_type, r.action_name) for r in await receipts(second, "skill_uninstall")]
        assert kinds == [("skill_uninstall", "echo")]
    async with assemble(settings, web=False) as third:
        assert await registry_of(third).get("echo") is None
        installs = [r.action_name for r in await receipts(third, "skill_install")]
        assert installs.count("echo") == 1
        assert installs.count("command_runner") == 1  # shipped skills register once
        disabled = [r.action_name for r in await receipts(third, "skill_disable")]
        assert disabled == ["command_runner"]


async def test_system_skills_cannot_be_uninstalled_and_names_are_unique(
    app: Lancelot, tmp_path: Path
) -> None:
    registry = registry_of(app)
    with pytest.raises(RegistryError, match="disable it instead"):
        await registry.uninstall("command_runner")
    clash = write_skill(tmp_path, "command_runner", ECHO)
    with pytest.raises(RegistryError, match="already installed"):
        await registry.install(clash, Ownership.USER, enabled=True)
    with pytest.raises(RegistryError, match="no skill named"):
        await registry.set_enabled("ghost", True)


async def test_marketplace_skill_gets_only_base_permissions_until_granted(
    app: Lancelot, tmp_path: Path
) -> None:
    permissions = ["read_input", "write_output", "run_commands"]
    source = write_skill(tmp_path, "lister", SHELL_SKILL, permissions=permissions, risk="T2")
    registry = registry_of(app)
    await registry.install(source, Ownership.MARKETPLACE, SignatureState.SIGNED, enabled=True)
    runner = runner_of(app)

    limited = await runner.run("lister", {}, via="memory")
    assert limited.status is RunStatus.SUCCESS
    assert limited.outputs["text"].startswith(f"{ActionStatus.NOT_PERMITTED}: Refused")
    assert "run_commands permission" in limited.outputs["text"]
    assert [r.action_name for r in await receipts(app, "tool_run")] == []
    refused = await receipts(app, "skill_action_refused")
    assert [r.parent_id for r in refused] == [limited.receipt_id]

    await registry.grant("lister", frozenset({Permission.RUN_COMMANDS}))
    granted = await runner.run("lister", {}, via="memory")
    assert granted.outputs["text"].startswith(f"{ActionStatus.DONE}: exit 0")
    assert [r.parent_id for r in await receipts(app, "tool_run")] == [granted.receipt_id]
    assert [r.action_name for r in await receipts(app, "skill_grant")] == ["lister"]


async def test_user_skill_gets_what_its_manifest_declares(app: Lancelot, tmp_path: Path) -> None:
    permissions = ["read_input", "write_output", "run_commands"]
    source = write_skill(tmp_path, "lister", SHELL_SKILL, permissions=permissions, risk="T2")
    await registry_of(app).install(source, Ownership.USER, enabled=True)
    run = await runner_of(app).run("lister", {}, via="memory")
    assert run.outputs["text"].startswith(f"{ActionStatus.DONE}: exit 0")
