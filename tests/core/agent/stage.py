"""The agent's stage in tests: the real app, a phone, and a scripted model wired in."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from bot.agent import wire_agent
from bot.app import Lancelot, assemble
from core.agent.quest import AgentLimits
from core.config import load_settings
from core.events import Card
from core.features import FeatureFlags
from core.receipts.base import ReceiptQuery
from core.receipts.model import StoredReceipt
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say
from tests.fakes.scripted_model import ScriptedRouter, Step


@dataclass
class Stage:
    """One running Lancelot with a phone attached."""

    app: Lancelot
    phone: MemoryChannel

    @property
    def workspace(self) -> Path:
        return self.app.home / "workspace"

    def model(
        self, *script: Step, limits: AgentLimits | None = None, **kw: object
    ) -> ScriptedRouter:
        """Wire a scripted model as the agent's router."""
        router = ScriptedRouter(script, **kw)  # type: ignore[arg-type]
        wire_agent(self.app, router, limits)
        return router

    async def say(self, text: str) -> Card:
        """Send as the owner; the first card back."""
        return await say(self.app, self.phone, text)

    async def next_card(self) -> Card:
        return (await self.phone.next_card())[1]

    async def receipts(self, action_type: str) -> list[StoredReceipt]:
        """Receipts of one type, oldest first."""
        await self.app.ledger.flush()
        page = await self.app.ledger.page(ReceiptQuery(action_type=action_type, limit=200))
        return list(reversed(page.receipts))


@asynccontextmanager
async def stage(tmp_path: Path, features: dict[str, str] | None = None) -> AsyncIterator[Stage]:
    """A fresh Lancelot (no web) with a MemoryChannel phone."""
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home")})
    flags = FeatureFlags(environ=features or {})
    async with assemble(settings, web=False, features=flags) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        yield Stage(app, phone)
