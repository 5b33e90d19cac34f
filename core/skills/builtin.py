"""The skills shipped in skills/: registered as SYSTEM skills at startup."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from core.skills.manifest import MANIFEST, ManifestError, load_manifest
from core.skills.package import folder_digest
from core.skills.registry import Ownership, SkillRegistry

log = logging.getLogger(__name__)


async def sync_system_skills(registry: SkillRegistry, root: Path) -> list[str]:
    """Register every shipped skill not yet known (enabled), and record new shipped code for
    those already known, keeping the owner's enable/disable choice. Returns problems found
    (a shipped skill with an invalid manifest is skipped, never imported)."""
    problems: list[str] = []
    manifests = await asyncio.to_thread(lambda: sorted(root.glob(f"*/{MANIFEST}")))
    for folder in (path.parent for path in manifests):
        try:
            manifest = await asyncio.to_thread(load_manifest, folder)
        except ManifestError as exc:
            log.warning("shipped skill skipped: %s", exc)
            problems.append(str(exc))
            continue
        known = await registry.get(manifest.name)
        if known is None:
            await registry.install(folder, Ownership.SYSTEM, enabled=True)
            continue
        if known.ownership is not Ownership.SYSTEM:
            problems.append(f"{manifest.name}: a {known.ownership} skill has the shipped name")
            continue
        digest = await asyncio.to_thread(folder_digest, folder)
        if digest != known.digest or known.path != folder:
            await registry.refresh(manifest.name, manifest.version, digest, folder)
    return problems
