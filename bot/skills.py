"""Wires the skill registry, executor, proposals and /skills into a Lancelot."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

from bot.governance import GovernanceKit
from bot.kernel import Kernel
from core.skills.builtin import sync_system_skills
from core.skills.commands import SkillCommands
from core.skills.context import Governance
from core.skills.proposals import SkillProposals
from core.skills.registry import SkillRegistry
from core.skills.runner import SkillRunner
from core.tools.action import ToolAction
from core.tools.file_ops import file_action
from core.tools.workspace import Workspace

log = logging.getLogger(__name__)


def shipped_skills_dir() -> Path | None:
    """Where the skills/ package is installed (without importing any skill)."""
    spec = importlib.util.find_spec("skills")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


async def wire_skills(app: Kernel, kit: GovernanceKit) -> SkillRunner:
    """Register /skills and the shipped SYSTEM skills; return the runner (scheduled skill
    jobs run through it)."""
    registry = SkillRegistry(app.state, app.ledger, app.home / "skills")
    await registry.setup()
    shipped = shipped_skills_dir()
    if shipped is None:
        log.warning("skills: the shipped skills package was not found; none registered")
    else:
        for problem in await sync_system_skills(registry, shipped):
            log.warning("skills: %s", problem)
    workspace = Workspace(app.home / "workspace")
    governance = Governance(
        kit.gateway,
        app.ledger,
        lambda capability: capability in kit.tools.capabilities(),
        lambda action: _with_facts(workspace, action),
    )
    runner = SkillRunner(registry, governance)
    proposals = SkillProposals(
        app.state,
        registry,
        app.tokens,
        app.bus,
        app.ledger,
        app.home / "skill-proposals",
        app.owner,
    )
    await proposals.setup()
    SkillCommands(app.commands, registry, runner, proposals, app.tokens).register()
    return runner


def _with_facts(workspace: Workspace, action: ToolAction) -> ToolAction:
    """A file.* action with the facts found by looking (file_action), as the agent's are."""
    if not action.capability.startswith("file."):
        return action
    return file_action(workspace, action.capability, dict(action.params))
