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
    governance = Governance(
        kit.gateway, app.ledger, lambda capability: capability in kit.tools.capabilities()
    )
    runner = SkillRunner(registry, governance)
    proposals = SkillProposals(
        app.state, registry, app.tokens, app.bus, app.ledger, app.home / "skill-proposals"
    )
    await proposals.setup()
    SkillCommands(app.commands, registry, runner, proposals, app.tokens).register()
    return runner
