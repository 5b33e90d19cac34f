"""Helpers for the sandbox tests: run a command with a valid token; inspect a container."""

from __future__ import annotations

import asyncio
from typing import Any

from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens


async def run(box: Any, capabilities: CapabilityTokens, command: str) -> ToolResult:
    """Run `command` with a valid capability token, as the policy engine would issue it."""
    action = ToolAction("shell.exec", command)
    result: ToolResult = await box.run(action, capabilities.issue(action.digest))
    return result


async def inspect(container: str) -> dict[str, Any] | None:
    """`docker inspect` of a container, or None once it is gone."""
    import docker
    from docker.errors import NotFound

    def look() -> dict[str, Any] | None:
        client = docker.from_env()
        try:
            return dict(client.api.inspect_container(container))
        except NotFound:
            return None
        finally:
            client.close()

    return await asyncio.to_thread(look)
