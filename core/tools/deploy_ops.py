"""DeployOps (deploy): runs the owner's configured deploy command in the workspace. The Soul
makes every deploy T3, so it only ever runs after the owner approved it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

from core.errors import ToolFailed
from core.tools.action import ToolAction
from core.tools.base import ToolResult, bounded
from core.tools.capability import CapabilityTokens
from core.tools.workspace import Workspace

CAPABILITIES = ("deploy",)
# Lancelot's own secrets stay out of the deploy command's environment.
_PRIVATE_PREFIXES = ("LANCELOT_", "TELEGRAM_", "GCHAT_", "OPENAI_", "ANTHROPIC_", "GEMINI_")


class DeployOps:
    """Runs `command` (an argument list, never a shell) with a timeout that kills it."""

    name = "deploy_ops"

    def __init__(
        self,
        workspace: Workspace,
        capabilities: CapabilityTokens,
        command: Sequence[str],
        timeout: float = 600.0,
    ) -> None:
        self._ws = workspace
        self._capabilities = capabilities
        self._command = tuple(command)
        self._timeout = timeout

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Run the configured deploy after checking the capability token."""
        self._capabilities.check(capability, action.digest)
        if action.capability not in CAPABILITIES:
            raise ToolFailed(f"DeployOps does not serve {action.capability}")
        if not self._command:
            raise ToolFailed("no deploy command is configured (tools.deploy_command)")
        env = {k: v for k, v in os.environ.items() if not k.startswith(_PRIVATE_PREFIXES)}
        try:
            process = await asyncio.create_subprocess_exec(
                *self._command,
                cwd=self._ws.root,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
        except OSError as exc:
            raise ToolFailed(f"the deploy command cannot start: {exc.strerror or exc}") from None
        try:
            async with asyncio.timeout(self._timeout):
                out, _ = await process.communicate()
        except TimeoutError:
            raise ToolFailed(f"the deploy took over {self._timeout:g} s and was killed") from None
        finally:
            if process.returncode is None:  # timed out or cancelled: never leave it running
                process.kill()
                await process.wait()
        assert process.returncode is not None
        text, cut = bounded(out.decode("utf-8", errors="replace"))
        return ToolResult(process.returncode, text, cut)
