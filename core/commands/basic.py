"""The commands every install has: /help, /status and /receipts (and /receipts verify), and
the greeting /start gives once onboarding is over."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from core.bus import Bus
from core.commands.registry import CommandContext, CommandRegistry, Router
from core.events import Button, Card, CardKind
from core.features import FeatureFlags
from core.receipts.base import ReceiptQuery, ReceiptStore
from core.security.viewer_access import ViewerAccess

VERSION = "0.1.0"

# A button under /status, made for that card (its id), or None when it does not apply now.
StatusButton = Callable[[str], Awaitable[Button | None]]


class HealthState(Protocol):
    """What /status shows of a health snapshot."""

    @property
    def ready(self) -> bool:
        """All checks pass."""
        ...

    @property
    def degraded_reasons(self) -> tuple[str, ...]:
        """Short reasons, one a failing check."""
        ...


class HealthView(Protocol):
    """Where /status reads health from (core.health.snapshot.HealthMonitor is one)."""

    async def snapshot(self) -> HealthState:
        """A fresh snapshot."""
        ...

    async def recent(self) -> HealthState:
        """The last snapshot while it is recent and nothing changed since, else a fresh one."""
        ...


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {secs}s"


@dataclass
class BasicCommands:
    """Handlers for the always-present commands."""

    registry: CommandRegistry
    bus: Bus
    ledger: ReceiptStore
    health: HealthView
    features: FeatureFlags
    viewer: ViewerAccess | None
    public_url: str
    link_ttl_seconds: int = 600
    status_fields: dict[str, Callable[[], str]] = field(default_factory=dict)
    status_buttons: list[StatusButton] = field(default_factory=list)
    started_at: float = 0.0

    def register(self) -> None:
        """Include /help, /status and /receipts (only when a receipt page runs). /start is
        onboarding's, which greets with `start` once the owner is set up."""
        self.started_at = self.started_at or time.time()
        router = Router("basic")
        router.command("help", "the commands that work", self.help)
        router.command("status", "uptime, channels, ledger and health", self.status)
        if self.viewer is not None:
            summary = "a private link to your receipts; verify checks the ledger"
            router.command("receipts", summary, self.receipts, usage="[verify]")
        self.registry.include(router)

    def _command_lines(self) -> str:
        return "\n".join(
            f"/{c.name}{(' ' + c.usage) if c.usage else ''} - {c.summary}"
            for c in self.registry.listing()
        )

    async def start(self, ctx: CommandContext) -> Card:
        """Greet the owner."""
        body = (
            "I'm Lancelot, your self-hosted agent. I act only under the rules you set, "
            "ask before anything irreversible, and keep a receipt of everything I do.\n\n"
            f"What works now:\n{self._command_lines()}"
        )
        return Card(kind=CardKind.REPLY, title="Hello, I'm Lancelot", body=body)

    async def help(self, ctx: CommandContext) -> Card:
        """List the registered commands."""
        return Card(kind=CardKind.REPLY, title="Commands", body=self._command_lines())

    async def status(self, ctx: CommandContext) -> Card:
        """Uptime, channels, receipts, health."""
        # Cached values (a burst of /status re-ran every check and forced a ledger commit
        # per message): recent health, and the receipts the ledger holds, queued included.
        snapshot = await self.health.recent()
        on = [name.lower() for name, value in self.features.snapshot().items() if value]
        fields = (
            ("Version", VERSION),
            ("Uptime", _duration(time.time() - self.started_at)),
            ("Channels", ", ".join(c.name for c in self.bus.channels) or "none"),
            ("Receipts", f"{self.ledger.recorded:,}"),
            ("Health", "ready" if snapshot.ready else "degraded"),
            ("Features on", ", ".join(on) or "none"),
            *((name, provider()) for name, provider in self.status_fields.items()),
        )
        body = "\n".join(f"- {r}" for r in snapshot.degraded_reasons)
        card = Card(kind=CardKind.REPLY, title="Status", body=body, fields=fields)
        made = [await make(card.correlation_id) for make in self.status_buttons]
        return replace(card, buttons=tuple(b for b in made if b is not None))

    async def receipts(self, ctx: CommandContext) -> Card:
        """A one-time link to the receipt page, and the latest few receipts; with `verify`,
        the ledger checked against its checkpoints and a fresh fingerprint."""
        if ctx.args.strip().lower() == "verify":
            return await self.verify()
        assert self.viewer is not None
        token = await self.viewer.issue_link()
        url = f"{self.public_url}/receipts?t={token}"
        await self.ledger.flush()
        latest = await self.ledger.page(ReceiptQuery(limit=5))
        lines = [f"#{r.seq} {r.action_type}/{r.action_name} {r.status}" for r in latest.receipts]
        body = (
            f"Your private link (works once, for {self.link_ttl_seconds // 60} minutes):\n"
            f"{url}\n\nLatest:\n" + "\n".join(lines)
        )
        return Card(
            kind=CardKind.RECEIPT,
            title="Receipts",
            body=body,
            buttons=(Button(label="Open receipts", url=url),),
        )

    async def verify(self) -> Card:
        """Verify against every checkpoint, sign one at the head if all holds, and answer with
        its fingerprint: the chat keeps it, a witness the machine cannot rewrite."""
        await self.ledger.flush()
        report = await self.ledger.verify()
        # Only an intact ledger is signed: a checkpoint vouches for what it covers.
        checkpoint = await self.ledger.checkpoint() if report.ok else None
        fingerprint = checkpoint.fingerprint if checkpoint is not None else report.head or "?"
        matched = report.last_checkpoint
        key = report.key or "none (the ledger is not signed)"
        fields = (
            ("Receipts", f"{report.checked:,}"),
            ("Checkpoints", f"{report.checkpoints:,} matched" if matched else "none"),
            ("Fingerprint", fingerprint),
            ("Key", key),
        )
        if report.ok:
            key_check = f" (--against {report.key}: the key that signs it)" if report.key else ""
            body = (
                "Hash chain intact and every signed checkpoint matches. Keep this message: "
                f"lancelot receipts verify --against {fingerprint} checks the ledger against it"
                f"{key_check}."
            )
            return Card(kind=CardKind.RECEIPT, title="Ledger verified", body=body, fields=fields)
        at = f" at receipt #{report.first_bad_seq}" if report.first_bad_seq is not None else ""
        return Card(
            kind=CardKind.ALERT,
            title="Ledger TAMPERED",
            body=f"Verification failed{at}: {report.reason}",
            fields=fields,
        )
