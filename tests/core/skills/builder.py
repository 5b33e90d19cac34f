"""Writes skill folders for tests: a manifest (valid unless told otherwise) and code."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import yaml

from bot.app import Lancelot
from core.receipts.base import ReceiptQuery
from core.receipts.model import StoredReceipt
from core.skills.context import Governance
from core.skills.registry import SkillRegistry
from core.skills.runner import SkillRunner


def manifest(name: str, **overrides: Any) -> dict[str, Any]:
    """A valid manifest dict for `name`, with `overrides` applied."""
    data: dict[str, Any] = {
        "name": name,
        "version": "1.0.0",
        "description": f"the {name} test skill",
        "permissions": ["read_input", "write_output"],
        "inputs": {"text": {"type": "string"}},
        "outputs": {"text": {"type": "string"}},
        "risk": "T1",
        "entry_point": "skill:run",
        "timeout_seconds": 5,
    }
    data.update(overrides)
    return data


def write_skill(
    root: Path, name: str, code: str, *, raw_manifest: str | None = None, **overrides: Any
) -> Path:
    """root/name/ with skill.yaml and skill.py; returns the folder."""
    folder = root / name
    folder.mkdir(parents=True)
    text = raw_manifest if raw_manifest is not None else yaml.safe_dump(manifest(name, **overrides))
    (folder / "skill.yaml").write_text(text)
    (folder / "skill.py").write_text(textwrap.dedent(code))
    return folder


# Code that leaves a mark when imported and then refuses to load.
EXPLODES_ON_IMPORT = """
from pathlib import Path
Path(__file__).with_name("IMPORTED").write_text("imported")
raise RuntimeError("this code must never be imported")
"""

ECHO = """
from core.skills.api import SkillContext

async def run(ctx: SkillContext) -> None:
    ctx.write_output("text", ctx.read_input("text"))
"""


def registry_of(app: Lancelot) -> SkillRegistry:
    """The app's skill registry (its state lives in the app's state.db)."""
    return SkillRegistry(app.state, app.ledger, app.home / "skills")


def runner_of(app: Lancelot, provided: frozenset[str] | None = None) -> SkillRunner:
    """A skill executor over the app's registry and governance, as /skills uses; `provided`
    narrows the capabilities that have a tool provider."""
    kit = app.governance
    assert kit is not None
    served = kit.tools.capabilities() if provided is None else provided
    governance = Governance(kit.gateway, app.ledger, served.__contains__)
    return SkillRunner(registry_of(app), governance)


async def receipts(app: Lancelot, action_type: str) -> list[StoredReceipt]:
    """Receipts of one type, oldest first, once everything queued is on disk."""
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type=action_type, limit=200))
    return list(reversed(page.receipts))
