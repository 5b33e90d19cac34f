"""/mcp: the MCP servers, their state and their tools, with a button to turn each server,
and each tool, on or off. A turn is the owner's own act on their own install: it needs no
approval, leaves an `mcp_switched` receipt and is kept in LANCELOT_HOME/mcp_choices.json,
so it survives a restart. A server turned off is stopped; a tool turned off is withdrawn
from the model's table at once."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from core.agent.mcp_tools import McpToolFollower
from core.commands.registry import CommandContext, CommandRegistry, PressContext, Router
from core.events import Button, Card, CardKind
from core.mcp import McpServers, ServerState
from core.mcp.choices import McpChoices
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.registry import SwitchReceipt
from core.security.tokens import ActionTokens
from soul.schema import Tier

log = logging.getLogger(__name__)

SWITCH = "mcp.switch"
TOKEN_TTL = 1800.0
TITLE = "MCP servers"


@dataclass
class McpCommands:
    """The /mcp cards and their switches. `tier(server, tool)` is what a call would be
    classified as now (the Soul's `risk_rules.mcp` over the tool's annotations)."""

    registry: CommandRegistry
    servers: McpServers
    choices: McpChoices
    follower: McpToolFollower
    tokens: ActionTokens
    ledger: ReceiptStore
    tier: Callable[[str, str], Tier]

    def register(self) -> None:
        """Add /mcp and its buttons."""
        router = Router("mcp")
        summary = "the MCP servers and their tools, each with an on/off switch"
        router.command("mcp", summary, self.command, usage="[server]")
        router.action(SWITCH, self.pressed)
        self.registry.include(router)

    async def command(self, ctx: CommandContext) -> Card:
        """/mcp lists the servers; /mcp <server> that server's tools."""
        server = ctx.args.strip()
        card_id = Card(CardKind.REPLY, TITLE).correlation_id
        if server and self.servers.state(server) is None:
            known = ", ".join(s.name for s in self.servers.states()) or "none is declared"
            return Card(CardKind.REPLY, TITLE, f"No MCP server is called {server!r} ({known}).")
        return await self.card(card_id, server or None)

    async def card(self, card_id: str, server: str | None, note: str = "") -> Card:
        """The servers (or one server's tools), with a fresh button per switch."""
        states = self.servers.states()
        if not states:
            body = "No MCP server is declared. Add one to mcp.json (see the guide)."
            return Card(CardKind.REPLY, TITLE, body, correlation_id=card_id)
        lines: list[str] = []
        buttons: list[Button] = []
        for state in states:
            if server is not None and state.name != server:
                continue
            lines.append(self._server_line(state))
            buttons.append(await self._button(card_id, state.name, None))
            if server is not None:
                for tool in state.tools:
                    lines.append(self._tool_line(state, tool.name))
                    buttons.append(await self._button(card_id, state.name, tool.name))
        if server is None:
            lines.append("\n/mcp <server> shows a server's tools, each with its switch.")
        body = "\n".join(lines) + (f"\n\n{note}" if note else "")
        title = TITLE if server is None else f"MCP server {server}"
        return Card(CardKind.REPLY, title, body, buttons=tuple(buttons), correlation_id=card_id)

    def _server_line(self, state: ServerState) -> str:
        on = self.choices.server_on(state.name)
        words = f"{state.name} ({state.transport}): {state.status}"
        if state.status == "ready":
            words += f", {len(self.follower.offered(state.name))} of {len(state.tools)} tools on"
        if state.reason:
            words += f" ({state.reason})"
        return words if on else f"{words}, turned off by you"

    def _tool_line(self, state: ServerState, tool: str) -> str:
        on = self.choices.tool_on(state.name, tool)
        tier = self.tier(state.name, tool)
        asks = "asks you first" if tier in ("T2", "T3") else "runs without asking"
        return f"  {tool}: {'on' if on else 'off'}, {tier}, {asks}"

    async def _button(self, card_id: str, server: str, tool: str | None) -> Button:
        if tool is None:
            on = self.choices.server_on(server)
            label = f"{'Disable' if on else 'Enable'} {server}"
        else:
            on = self.choices.tool_on(server, tool)
            label = f"{'Disable' if on else 'Enable'} {tool}"
        payload = {"server": server, "tool": tool, "on": not on}
        token = await self.tokens.issue(SWITCH, payload, card_id, ttl=TOKEN_TTL)
        return Button(label, token)

    async def pressed(self, ctx: PressContext) -> Card:
        """Turn a server or a tool on or off, keep it, record it, show the card again."""
        server = str(ctx.payload.get("server", ""))
        raw_tool = ctx.payload.get("tool")
        tool = str(raw_tool) if raw_tool is not None else None
        on = bool(ctx.payload.get("on"))
        if self.servers.state(server) is None:
            return await self.card(ctx.card_id, None, f"No MCP server is called {server!r} now.")
        what = server if tool is None else f"{server}'s {tool}"
        try:
            await self._switch(server, tool, on)
        except OSError as exc:
            log.warning("mcp: could not keep the switch of %s: %s", what, exc)
            self._record(server, tool, on, ctx, error=str(exc))
            return await self.card(
                ctx.card_id, server if tool else None, f"Could not switch {what}."
            )
        self._record(server, tool, on, ctx)
        note = f"{what} is {'on' if on else 'off'}, kept across restarts."
        return await self.card(ctx.card_id, server if tool else None, note)

    async def _switch(self, server: str, tool: str | None, on: bool) -> None:
        """Keep the choice, then stop or start the server, or withdraw or offer the tool."""
        if tool is not None:
            self.choices.set_tool(server, tool, on)
            state = self.servers.state(server)
            if state is not None:
                self.follower.follow(state)
            return
        self.choices.set_server(server, on)
        if on:
            await self.servers.enable(server)
        else:
            await self.servers.disable(server)

    def _record(
        self, server: str, tool: str | None, on: bool, ctx: PressContext, error: str | None = None
    ) -> None:
        self.ledger.append(
            Receipt(
                action_type=SwitchReceipt.MCP_SWITCHED,
                action_name=server if tool is None else f"{server}.{tool}",
                inputs={"server": server, "tool": tool, "on": on, "via": ctx.event.channel},
                outputs={"kept_in": str(self.choices.path)},
                status=ReceiptStatus.FAILURE if error else ReceiptStatus.SUCCESS,
                error_message=error,
                parent_id=ctx.receipt_id,
            )
        )
