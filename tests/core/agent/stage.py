"""The agent's stage in tests: the real app, a phone, and a scripted model wired in."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

from bot.app import Lancelot, assemble
from core.agent.quest import AgentLimits
from core.config import Settings, load_settings
from core.events import Card
from core.features import FeatureFlags
from core.llm.types import ModelRouter
from core.receipts.base import ReceiptQuery
from core.receipts.model import StoredReceipt
from core.tools.definition import ToolDefinition
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say
from tests.fakes.scripted_model import RouterRelay, ScriptedRouter, Step


class Stage:
    """One running Lancelot with a phone attached, and a scripted model the test can swap.

    The app is assembled with a relay as its model router, so `model()` only points the
    relay at a new script; new agent limits need a new agent, so the app restarts (same
    home, same phone) before the next message.
    """

    def __init__(
        self,
        settings: Settings,
        features: FeatureFlags,
        tools: tuple[ToolDefinition, ...] = (),
    ) -> None:
        self._settings = settings
        self._features = features
        self._tools = tools
        self._relay = RouterRelay()
        self._limits: AgentLimits | None = None
        self._running_limits: AgentLimits | None = None
        self._stack = AsyncExitStack()
        self.phone = MemoryChannel()
        self.app: Lancelot

    async def start(self) -> None:
        """Assemble the app with the current limits and attach the phone."""
        self.app = await self._stack.enter_async_context(
            assemble(
                self._settings,
                web=False,
                features=self._features,
                models=self._relay,
                agent_limits=self._limits,
                tools=self._tools,
            )
        )
        self._running_limits = self._limits
        await self.app.attach(self.phone)

    async def stop(self) -> None:
        await self._stack.aclose()

    @property
    def workspace(self) -> Path:
        return self._settings.home / "workspace"

    def model(
        self, *script: Step, limits: AgentLimits | None = None, **kw: object
    ) -> ScriptedRouter:
        """Make a scripted model the agent's router (with `limits`, from the next message)."""
        router = ScriptedRouter(script, **kw)  # type: ignore[arg-type]
        self.use(router, limits)
        return router

    def use(self, router: ModelRouter, limits: AgentLimits | None = None) -> None:
        """Make `router` the agent's model router."""
        self._relay.target = router
        self._limits = limits

    async def say(self, text: str) -> Card:
        """Send as the owner; the first card back."""
        if self._limits != self._running_limits:
            await self.stop()
            self._stack = AsyncExitStack()
            self.phone = MemoryChannel()
            await self.start()
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
    running = Stage(settings, FeatureFlags(environ=features or {}))
    await running.start()
    try:
        yield running
    finally:
        await running.stop()
