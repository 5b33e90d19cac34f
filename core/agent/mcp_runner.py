"""The provider of every MCP tool (`mcp.<server>.<tool>`): checks the capability governance
issued, calls the server through the supervisor (bounded in time and size), fences the
answer as untrusted data and leaves an `mcp_call` receipt: the arguments' digest (the
arguments themselves only when they carry no secret), the result's size, the duration and
the error."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from core.errors import PolicyDenied, ToolFailed
from core.mcp import CallResult, McpServers
from core.mcp.choices import McpChoices
from core.mcp.naming import PREFIX, split_capability
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.redaction import Redactor, holds_credential
from core.receipts.registry import McpReceipt
from core.security.sanitizer import Sanitizer
from core.security.untrusted import fence
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens

RUNNER = "mcp"
WITHHELD = "withheld: they carry a secret"


def arguments_digest(arguments: Mapping[str, Any]) -> str:
    """sha256 of the arguments as canonical JSON: what a receipt keeps to prove which
    arguments went, without keeping them."""
    text = json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class McpRunner:
    """Runs governed calls of MCP servers' tools."""

    name = RUNNER
    prefix = PREFIX

    def __init__(
        self,
        servers: McpServers,
        capabilities: CapabilityTokens,
        choices: McpChoices,
        ledger: ReceiptStore,
        redactor: Redactor,
    ) -> None:
        self._servers = servers
        self._capabilities = capabilities
        self._choices = choices
        self._ledger = ledger
        self._redactor = redactor
        self._sanitizer = Sanitizer()

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Call the tool the action names with its parameters, as governance allowed."""
        self._capabilities.check(capability, action.digest)
        found = split_capability(action.capability)
        if found is None:
            raise ToolFailed(f"{action.capability} is not an MCP server's tool")
        server, tool = found
        if not (self._choices.server_on(server) and self._choices.tool_on(server, tool)):
            raise PolicyDenied(
                "mcp-switched-off",
                (f"Turn it on again from /mcp to use {server}'s {tool}.",),
                message=f"you turned MCP server {server}'s tool {tool} off",
            )
        result = await self._servers.call(server, tool, action.params)
        self._record(result, action.params)
        if result.error is not None:
            raise ToolFailed(f"MCP server {server}, tool {tool}: {result.error}")
        return self._answer(result)

    def _answer(self, result: CallResult) -> ToolResult:
        """The server's answer fenced as a stranger's text; the receipt keeps its size."""
        source = f"MCP server {result.server} (tool {result.tool})"
        fenced = fence(result.text or "(no text)", source, "tool result", self._sanitizer)
        facts = f"{source}: {result.size:,} characters" + (", cut" if result.truncated else "")
        if result.is_error:
            facts += "; the tool reported an error"
        recorded = facts + (
            f"; reads like an injection ({fenced.finding})" if fenced.finding else ""
        )
        return ToolResult(
            1 if result.is_error else 0,
            f"{facts}\n{fenced.text}",
            result.truncated,
            recorded=recorded,
        )

    def _record(self, result: CallResult, arguments: Mapping[str, Any]) -> None:
        """The mcp_call receipt: which arguments (by digest), how big, how long, what failed."""
        text = json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
        secret = holds_credential(text) or self._redactor.carries(text)
        failed = result.error is not None or result.is_error
        self._ledger.append(
            Receipt(
                action_type=McpReceipt.CALLED,
                action_name=f"{result.server}.{result.tool}",
                inputs={
                    "server": result.server,
                    "tool": result.tool,
                    "arguments_digest": arguments_digest(arguments),
                    "arguments": WITHHELD if secret else dict(arguments),
                },
                outputs={
                    "size": result.size,
                    "truncated": result.truncated,
                    "tool_error": result.is_error,
                },
                status=ReceiptStatus.FAILURE if failed else ReceiptStatus.SUCCESS,
                duration_ms=result.duration_ms,
                error_message=result.error or (result.text[:300] if result.is_error else None),
            )
        )
