"""The effect engine as governance sees it: dry runs while the sandbox answers, and a tool
provider for `shell.apply`, which commits a kept dry run (nothing runs again)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from core.errors import ToolFailed
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.effects.errors import EffectsError
from core.tools.effects.records import DryRun
from core.tools.effects.service import ShellEffects

APPLY = "shell.apply"


class SandboxDryRuns:
    """Dry runs through the effect engine, offered only while the sandbox is usable (its
    engine answers and the image exists): otherwise nothing can be seen before it runs."""

    def __init__(
        self, effects: ShellEffects, unavailable: Callable[[], Awaitable[str | None]]
    ) -> None:
        self._effects = effects
        self._unavailable = unavailable

    async def visible(self) -> bool:
        """Whether the next command can be dry-run."""
        return await self._unavailable() is None

    async def dry_run(self, action: ToolAction, capability: str | None) -> DryRun:
        """Run the command against a copy-on-write overlay of the workspace."""
        return await self._effects.dry_run(action, capability)

    async def discard(self, dry_run_id: str) -> None:
        """Drop a kept dry run; the workspace is untouched."""
        await self._effects.discard(dry_run_id)

    async def stale(self, dry_run_id: str) -> bool:
        """Whether the dry run was dropped at its apply: the workspace no longer matched it."""
        run = await self._effects.get(dry_run_id)
        return run is not None and run.state == "stale"


class EffectApplier:
    """Serves `shell.apply`: applies exactly the effect set the action names, by digest."""

    name = "docker_dry_run"

    def __init__(self, effects: ShellEffects, capabilities: CapabilityTokens) -> None:
        self._effects = effects
        self._capabilities = capabilities

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Apply the dry run `action.params["dry_run"]` if its effects hash to
        `action.params["effects"]`; the result is the dry run's own exit code and output."""
        self._capabilities.check(capability, action.digest)
        dry_run_id = str(action.params.get("dry_run", ""))
        digest = str(action.params.get("effects", ""))
        run = await self._effects.get(dry_run_id)
        try:
            change = await self._effects.apply(dry_run_id, digest)
        except EffectsError as exc:
            raise ToolFailed(exc.user_message, user_message=exc.user_message) from None
        result = run.result if run is not None else ToolResult(0, "")
        return ToolResult(
            result.exit_code,
            result.output,
            result.truncated,
            file_changes=change.effects.file_changes(),
            provider=self.name,
        )
