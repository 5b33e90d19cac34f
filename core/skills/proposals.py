"""Skill proposals: nothing is installed until the owner taps Install on its card."""

from __future__ import annotations

import asyncio
import shutil
import time
import uuid
from pathlib import Path

import aiosqlite

from core.bus import Bus
from core.commands.registry import PressContext
from core.errors import PermanentError
from core.events import Button, Card, CardKind
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.security.owner_view import OwnerView
from core.security.tokens import ActionTokens
from core.skills.manifest import SkillManifest, load_manifest
from core.skills.package import (
    SignatureState,
    folder_digest,
    unpack,
    verify_marketplace_permissions,
)
from core.skills.permissions import MARKETPLACE_BASE, Permission
from core.skills.registry import Ownership, SkillRegistry
from core.storage.versions import Schema, migrate

DECIDE = "skills.proposal"
CARD_TTL = 7 * 86400.0

SCHEMA = Schema(
    "skill_proposals",
    (
        """
CREATE TABLE IF NOT EXISTS skill_proposals (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    folder TEXT NOT NULL,
    digest TEXT NOT NULL,
    ownership TEXT NOT NULL,
    signature TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at REAL NOT NULL
);
""",
    ),
)


def _choices(extra: frozenset[Permission]) -> list[tuple[str, str, bool]]:
    """The card's buttons: (label, choice, grant the extra permissions)."""
    if extra:
        names = ", ".join(sorted(extra))
        install = [
            (f"Install, grant {names}", "enable", True),
            ("Install without them", "enable", False),
        ]
    else:
        install = [("Install and enable", "enable", False), ("Install disabled", "install", False)]
    return [*install, ("Deny", "deny", False)]


class SkillProposals:
    """Stages a skill, asks the owner with a card, installs on Install."""

    def __init__(
        self,
        db: aiosqlite.Connection,
        registry: SkillRegistry,
        tokens: ActionTokens,
        bus: Bus,
        ledger: ReceiptStore,
        staging: Path,
        owner: OwnerView,
    ) -> None:
        self._db = db
        self._owner = owner  # who decided, by the name the owner gave
        self._registry = registry
        self._tokens = tokens
        self._bus = bus
        self._ledger = ledger
        self._staging = staging

    async def setup(self) -> None:
        """Create or upgrade the table, and make the staging folder."""
        await migrate(self._db, SCHEMA)
        self._staging.mkdir(parents=True, exist_ok=True)

    def staging_folder(self) -> Path:
        """A fresh folder to stage a proposed skill in."""
        return self._staging / uuid.uuid4().hex

    async def propose(
        self,
        folder: Path,
        *,
        parent_id: str | None = None,
        ownership: Ownership = Ownership.USER,
        signature: SignatureState = SignatureState.UNSIGNED,
    ) -> Card:
        """Validate the staged folder (nothing imported) and send the owner its card."""
        manifest = await asyncio.to_thread(load_manifest, folder)
        digest = await asyncio.to_thread(folder_digest, folder)
        proposal_id = uuid.uuid4().hex[:16]
        await self._db.execute(
            "INSERT INTO skill_proposals VALUES (?, ?, ?, ?, ?, ?, 'PENDING', ?)",
            (
                proposal_id,
                manifest.name,
                str(folder),
                digest,
                str(ownership),
                str(signature),
                time.time(),
            ),
        )
        self._record("skill_proposed", manifest.name, proposal_id, parent_id, digest=digest)
        card = await self._card(proposal_id, manifest, ownership, signature, digest)
        await self._bus.broadcast(card)
        return card

    async def propose_package(
        self, package: Path, *, parent_id: str | None, trusted_keys: frozenset[str]
    ) -> Card:
        """Check a marketplace .zip, stage it, and ask the owner."""
        report = await asyncio.to_thread(
            verify_marketplace_permissions,
            package,
            allowed=frozenset(Permission),
            trusted_keys=trusted_keys,
        )
        folder = self.staging_folder()
        await asyncio.to_thread(unpack, report, folder)
        return await self.propose(
            folder,
            parent_id=parent_id,
            ownership=Ownership.MARKETPLACE,
            signature=report.signature,
        )

    async def _card(
        self,
        proposal_id: str,
        manifest: SkillManifest,
        ownership: Ownership,
        signature: SignatureState,
        digest: str,
    ) -> Card:
        card_id = f"skill-proposal-{proposal_id}"
        extra = frozenset(manifest.permissions) - MARKETPLACE_BASE
        limited = ownership is Ownership.MARKETPLACE and bool(extra)
        buttons = []
        for label, choice, grant in _choices(extra if limited else frozenset()):
            payload = {"id": proposal_id, "choice": choice, "grant": grant}
            token = await self._tokens.issue(DECIDE, payload, card_id, ttl=CARD_TTL)
            buttons.append(Button(label, token))
        body = f"{manifest.description}\n\nNothing of it has been imported or run."
        if limited:
            base = ", ".join(sorted(MARKETPLACE_BASE))
            body += f" A marketplace skill gets only {base} unless you grant more."
        return Card(
            CardKind.APPROVAL,
            f"Install the skill {manifest.name} {manifest.version}?",
            body,
            fields=(
                ("Permissions", ", ".join(manifest.permissions) or "none"),
                ("Risk", manifest.risk),
                ("Source", f"{ownership}, {signature}"),
                ("Content hash", digest[:16]),
            ),
            buttons=tuple(buttons),
            correlation_id=card_id,
        )

    async def on_press(self, ctx: PressContext) -> Card | None:
        """Install (enabled or not, with or without grants) or deny."""
        proposal_id = str(ctx.payload.get("id"))
        async with self._db.execute(
            "SELECT name, folder, digest, ownership, signature FROM skill_proposals"
            " WHERE id = ? AND state = 'PENDING'",
            (proposal_id,),
        ) as cur:
            row = await cur.fetchone()
        if row is None:
            return None
        name, folder_text, digest, ownership, signature = row
        folder, choice = Path(folder_text), ctx.payload.get("choice")
        if choice == "deny":
            return await self._close(proposal_id, name, folder, "DENIED", ctx, "Not installed.")
        if await asyncio.to_thread(folder_digest, folder) != digest:
            note = "Refused: the skill changed after it was proposed."
            return await self._close(proposal_id, name, folder, "REFUSED", ctx, note)
        manifest = await asyncio.to_thread(load_manifest, folder)
        extra = frozenset(manifest.permissions) - MARKETPLACE_BASE
        grant = extra if ctx.payload.get("grant") else frozenset()
        try:
            await self._registry.install(
                folder,
                Ownership(ownership),
                SignatureState(signature),
                enabled=choice == "enable",
                granted=grant,
                parent_id=ctx.receipt_id,
            )
        except PermanentError as exc:
            return await self._close(proposal_id, name, folder, "REFUSED", ctx, str(exc))
        state = "enabled" if choice == "enable" else "disabled; enable it with /skills"
        return await self._close(
            proposal_id, name, folder, "INSTALLED", ctx, f"Installed, {state}."
        )

    async def _close(
        self, proposal_id: str, name: str, folder: Path, state: str, ctx: PressContext, note: str
    ) -> Card:
        await self._db.execute(
            "UPDATE skill_proposals SET state = ? WHERE id = ?", (state, proposal_id)
        )
        if folder.is_relative_to(self._staging) and folder != self._staging:
            top = self._staging / folder.relative_to(self._staging).parts[0]
            await asyncio.to_thread(shutil.rmtree, top, True)
        status = ReceiptStatus.REFUSED if state == "REFUSED" else ReceiptStatus.SUCCESS
        self._record(
            "skill_proposal_decided",
            name,
            proposal_id,
            ctx.receipt_id,
            status,
            state=state,
            by=ctx.event.sender_id,
            via=ctx.event.channel,
        )
        title = {"INSTALLED": "Installed", "DENIED": "Denied", "REFUSED": "Not installed"}[state]
        return Card(
            CardKind.APPROVAL,
            f"{title}: skill {name}",
            f"{note}\nDecided by {self._owner.who(ctx.event.sender_id)} via {ctx.event.channel}.",
            correlation_id=ctx.card_id,
        )

    def _record(
        self,
        kind: str,
        name: str,
        proposal_id: str,
        parent_id: str | None,
        status: ReceiptStatus = ReceiptStatus.SUCCESS,
        **outputs: object,
    ) -> None:
        self._ledger.append(
            Receipt(
                kind,
                name,
                inputs={"proposal_id": proposal_id},
                outputs=outputs,
                status=status,
                parent_id=parent_id,
            )
        )
