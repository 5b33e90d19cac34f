"""The skill registry in state.db: who owns each skill, whether it is signed, and whether it
is enabled. Every change is a receipt."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import aiosqlite

from core.errors import PermanentError
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.skills.manifest import SkillManifest, load_manifest
from core.skills.package import SignatureState, folder_digest
from core.skills.permissions import MARKETPLACE_BASE, Permission
from core.storage.versions import Schema, migrate

SCHEMA = Schema(
    "skills",
    (
        """
CREATE TABLE IF NOT EXISTS skills (
    name TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    ownership TEXT NOT NULL,
    signature TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    path TEXT NOT NULL,
    digest TEXT NOT NULL,
    granted TEXT NOT NULL DEFAULT '[]',
    config TEXT NOT NULL DEFAULT '{}',
    installed_at REAL NOT NULL
);
""",
    ),
)
_COLUMNS = "name, version, ownership, signature, enabled, path, digest, granted, config"


class Ownership(StrEnum):
    """Where a skill came from."""

    SYSTEM = "SYSTEM"  # shipped with Lancelot in skills/
    USER = "USER"  # made here (the factory) and approved by the owner
    MARKETPLACE = "MARKETPLACE"  # a package from elsewhere


class RegistryError(PermanentError):
    """A registry change that cannot be made; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message, user_message=message)


@dataclass(frozen=True, slots=True)
class SkillRecord:
    """One installed skill as the registry holds it."""

    name: str
    version: str
    ownership: Ownership
    signature: SignatureState
    enabled: bool
    path: Path
    digest: str
    granted: frozenset[Permission]
    config: dict[str, Any]

    def permissions(self, manifest: SkillManifest) -> frozenset[Permission]:
        """What the skill may use: its manifest's permissions, limited for marketplace
        skills to the base set plus what the owner granted."""
        declared = frozenset(manifest.permissions)
        if self.ownership is Ownership.MARKETPLACE:
            return declared & (MARKETPLACE_BASE | self.granted)
        return declared


def _record(row: aiosqlite.Row | tuple[Any, ...]) -> SkillRecord:
    name, version, owner, signature, enabled, path, digest, granted, config = row
    return SkillRecord(
        name,
        version,
        Ownership(owner),
        SignatureState(signature),
        bool(enabled),
        Path(path),
        digest,
        frozenset(Permission(p) for p in json.loads(granted)),
        json.loads(config),
    )


class SkillRegistry:
    """Installed skills. User and marketplace skills are copied under `home`."""

    def __init__(self, db: aiosqlite.Connection, ledger: ReceiptStore, home: Path) -> None:
        self._db = db
        self._ledger = ledger
        self.home = home
        self._lock = asyncio.Lock()

    async def setup(self) -> None:
        """Create or upgrade the table, and make the skills folder."""
        await migrate(self._db, SCHEMA)
        self.home.mkdir(parents=True, exist_ok=True)

    async def get(self, name: str) -> SkillRecord | None:
        """One skill by name."""
        async with self._db.execute(f"SELECT {_COLUMNS} FROM skills WHERE name = ?", (name,)) as c:
            row = await c.fetchone()
        return _record(row) if row else None

    async def all(self) -> list[SkillRecord]:
        """Every installed skill, by name."""
        async with self._db.execute(f"SELECT {_COLUMNS} FROM skills ORDER BY name") as cur:
            return [_record(r) for r in await cur.fetchall()]

    async def install(
        self,
        source: Path,
        ownership: Ownership,
        signature: SignatureState = SignatureState.UNSIGNED,
        *,
        enabled: bool,
        granted: frozenset[Permission] = frozenset(),
        parent_id: str | None = None,
    ) -> SkillRecord:
        """Validate and register a skill folder (copied under home unless SYSTEM)."""
        manifest = await asyncio.to_thread(load_manifest, source)
        async with self._lock:
            if await self.get(manifest.name) is not None:
                raise RegistryError(f"a skill named {manifest.name} is already installed")
            folder = source if ownership is Ownership.SYSTEM else self.home / manifest.name
            if folder != source:
                await asyncio.to_thread(_replace_tree, source, folder)
            digest = await asyncio.to_thread(folder_digest, folder)
            grants = sorted(str(p) for p in granted & frozenset(manifest.permissions))
            await self._db.execute(
                f"INSERT INTO skills ({_COLUMNS}, installed_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    *(manifest.name, manifest.version, str(ownership), str(signature)),
                    *(int(enabled), str(folder), digest, json.dumps(grants), "{}", time.time()),
                ),
            )
        self._receipt(
            "skill_install",
            manifest.name,
            parent_id,
            ownership=str(ownership),
            signature=str(signature),
            version=manifest.version,
            digest=digest,
            enabled=enabled,
            granted=grants,
        )
        record = await self.get(manifest.name)
        assert record is not None
        return record

    async def set_enabled(self, name: str, enabled: bool, parent_id: str | None = None) -> None:
        """Enable or disable a skill."""
        await self._update(name, "enabled = ?", (int(enabled),))
        self._receipt("skill_enable" if enabled else "skill_disable", name, parent_id)

    async def grant(
        self, name: str, permissions: frozenset[Permission], parent_id: str | None = None
    ) -> None:
        """Give a skill permissions beyond its ownership's default (the owner's decision)."""
        record = await self._must_get(name)
        granted = sorted(str(p) for p in record.granted | permissions)
        await self._update(name, "granted = ?", (json.dumps(granted),))
        self._receipt("skill_grant", name, parent_id, granted=granted)

    async def configure(
        self, name: str, values: dict[str, Any], parent_id: str | None = None
    ) -> None:
        """Set the owner's configuration overrides for a skill."""
        record = await self._must_get(name)
        merged = {**record.config, **values}
        await self._update(name, "config = ?", (json.dumps(merged),))
        self._receipt("skill_configure", name, parent_id, keys=sorted(values))

    async def refresh(self, name: str, version: str, digest: str, folder: Path) -> None:
        """Record new shipped code (or a new install location) for a SYSTEM skill."""
        await self._update(
            name, "version = ?, digest = ?, path = ?", (version, digest, str(folder))
        )
        self._receipt("skill_update", name, None, version=version, digest=digest)

    async def uninstall(self, name: str, parent_id: str | None = None) -> None:
        """Remove a skill (and its copied folder). SYSTEM skills can only be disabled."""
        record = await self._must_get(name)
        if record.ownership is Ownership.SYSTEM:
            raise RegistryError(f"{name} ships with Lancelot; disable it instead")
        await self._db.execute("DELETE FROM skills WHERE name = ?", (name,))
        if record.path.is_relative_to(self.home):
            await asyncio.to_thread(shutil.rmtree, record.path, True)
        self._receipt("skill_uninstall", name, parent_id)

    async def _must_get(self, name: str) -> SkillRecord:
        record = await self.get(name)
        if record is None:
            raise RegistryError(f"no skill named {name}")
        return record

    async def _update(self, name: str, assignment: str, values: tuple[Any, ...]) -> None:
        cur = await self._db.execute(
            f"UPDATE skills SET {assignment} WHERE name = ?", (*values, name)
        )
        if cur.rowcount == 0:
            raise RegistryError(f"no skill named {name}")

    def _receipt(self, kind: str, name: str, parent_id: str | None, **outputs: Any) -> None:
        self._ledger.append(
            Receipt(
                kind,
                name,
                inputs={"skill": name},
                outputs=outputs or None,
                status=ReceiptStatus.SUCCESS,
                parent_id=parent_id,
            )
        )


def _replace_tree(source: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
