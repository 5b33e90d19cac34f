"""/mcp: the MCP servers, their state and their tools, with a button to turn each server,
and each tool, on or off, and one to have a tool ask first or run without asking. A tap is
the owner's own act on their own install: it needs no approval, leaves a receipt
(`mcp_switched`, `mcp_tier_chosen`) and is kept in LANCELOT_HOME/mcp_choices.json, so it
survives a restart. A server turned off is stopped; a tool turned off is withdrawn from the
model's table at once; a tool's tier applies from its next call. The owner may lower a tool
only as far as the Soul's `risk_rules.mcp` lets them (core/mcp/naming.py, governing_tier)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from core.agent.mcp_tools import McpToolFollower
from core.commands.registry import CommandContext, CommandRegistry, PressContext, Router
from core.events import Button, Card, CardKind
from core.mcp import McpServers, ServerState, ToolInfo
from core.mcp.choices import McpChoices
from core.mcp.naming import annotated_tier, asks, governing_tier, soul_tier
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.registry import SwitchReceipt
from core.security.tokens import ActionTokens
from soul.schema import TIERS, Tier, tier_rank

log = logging.getLogger(__name__)

SWITCH = "mcp.switch"
SET_TIER = "mcp.tier"
UNASKED: Tier = "T1"  # "run without asking": reversible, recorded, no card
ASKED: Tier = "T2"  # "ask first"
TOKEN_TTL = 1800.0
TITLE = "MCP servers"


@dataclass(frozen=True, slots=True)
class ToolTiers:
    """What decides a tool's tier: the Soul's `risk_rules.mcp` entry (None: it has none),
    the owner's choice (None: none) and the server's annotations."""

    soul: Tier | None
    chosen: Tier | None
    annotated: Tier

    @property
    def governing(self) -> Tier:
        """The tier a call is classified at now."""
        return governing_tier(self.soul, self.chosen, self.annotated)

    @property
    def default(self) -> Tier:
        """The tier without the owner's choice."""
        return governing_tier(self.soul, None, self.annotated)

    def allows(self, tier: Tier) -> bool:
        """Whether the Soul lets the owner put the tool at `tier` (never below its entry)."""
        return self.soul is None or tier_rank(tier) >= tier_rank(self.soul)


@dataclass
class McpCommands:
    """The /mcp cards and their switches. `soul_rules()` is the active Soul's
    `risk_rules.mcp` (empty without governance)."""

    registry: CommandRegistry
    servers: McpServers
    choices: McpChoices
    follower: McpToolFollower
    tokens: ActionTokens
    ledger: ReceiptStore
    soul_rules: Callable[[], Mapping[str, Mapping[str, Tier]]]

    def register(self) -> None:
        """Add /mcp and its buttons."""
        router = Router("mcp")
        summary = "the MCP servers and their tools, each with an on/off switch and its tier"
        router.command("mcp", summary, self.command, usage="[server]")
        router.action(SWITCH, self.pressed)
        router.action(SET_TIER, self.tier_pressed)
        self.registry.include(router)

    def tiers(self, state: ServerState, tool: ToolInfo) -> ToolTiers:
        """What decides `tool`'s tier now."""
        return ToolTiers(
            soul_tier(self.soul_rules(), state.name, tool.name),
            self.choices.tier(state.name, tool.name),
            annotated_tier(tool.hints),
        )

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
                    lines.append(self._tool_line(state, tool))
                    buttons.append(await self._button(card_id, state.name, tool.name))
                    tier_button = await self._tier_button(card_id, state, tool)
                    buttons += [tier_button] if tier_button is not None else []
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

    def _tool_line(self, state: ServerState, tool: ToolInfo) -> str:
        on = self.choices.tool_on(state.name, tool.name)
        tiers = self.tiers(state, tool)
        tier = tiers.governing
        words = f"  {tool.name}: {'on' if on else 'off'}, {tier}, " + (
            "asks you first" if asks(tier) else "runs without asking"
        )
        if tiers.chosen is not None and tier == tiers.chosen:
            words += " (your choice)"
        elif asks(tier) and not tiers.allows(UNASKED):
            words += " (the Soul says so)"
        return words

    async def _tier_button(self, card_id: str, state: ServerState, tool: ToolInfo) -> Button | None:
        """The button that has the tool run unasked, or ask first; none when the Soul keeps
        it asking."""
        tiers = self.tiers(state, tool)
        if asks(tiers.governing):
            if not tiers.allows(UNASKED):
                return None
            label, tier = f"Run {tool.name} unasked", UNASKED
        else:
            label, tier = f"Ask before {tool.name}", ASKED
        payload = {"server": state.name, "tool": tool.name, "tier": tier}
        return Button(label, await self.tokens.issue(SET_TIER, payload, card_id, ttl=TOKEN_TTL))

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

    async def tier_pressed(self, ctx: PressContext) -> Card:
        """Have a tool ask first or run without asking, as far as the Soul allows; keep it,
        record it, show the server's card again."""
        server, name = str(ctx.payload.get("server", "")), str(ctx.payload.get("tool", ""))
        tier = str(ctx.payload.get("tier", ""))
        state = self.servers.state(server)
        tool = state.tool(name) if state is not None else None
        if state is None or tool is None or tier not in TIERS:
            return await self.card(ctx.card_id, None, f"No MCP tool {server}.{name} now.")
        tiers = self.tiers(state, tool)
        wanted: Tier = ASKED if tier_rank(tier) >= tier_rank(ASKED) else UNASKED
        if not tiers.allows(wanted):
            note = (
                f"The Soul says {server}'s {name} runs at {tiers.soul} (risk_rules.mcp); "
                "lower it there, with /soul."
            )
            self._record_tier(ctx, server, name, wanted, tiers, ReceiptStatus.REFUSED, note)
            return await self.card(ctx.card_id, server, note)
        kept = None if asks(wanted) == asks(tiers.default) else wanted
        try:
            self.choices.set_tier(server, name, kept)
        except OSError as exc:
            log.warning("mcp: could not keep %s.%s's tier: %s", server, name, exc)
            self._record_tier(ctx, server, name, wanted, tiers, ReceiptStatus.FAILURE, str(exc))
            return await self.card(ctx.card_id, server, f"Could not change {server}'s {name}.")
        now = self.tiers(state, tool)
        self._record_tier(ctx, server, name, wanted, now, ReceiptStatus.SUCCESS)
        does = "asks you first" if asks(now.governing) else "runs without asking"
        note = f"{server}'s {name} {does} ({now.governing}), kept across restarts."
        return await self.card(ctx.card_id, server, note)

    def _record_tier(
        self,
        ctx: PressContext,
        server: str,
        tool: str,
        wanted: Tier,
        tiers: ToolTiers,
        status: ReceiptStatus,
        error: str | None = None,
    ) -> None:
        """The mcp_tier_chosen receipt: what the owner asked for, what governs now, and the
        Soul's entry that bounds it."""
        self.ledger.append(
            Receipt(
                action_type=SwitchReceipt.MCP_TIER_CHOSEN,
                action_name=f"{server}.{tool}",
                inputs={"server": server, "tool": tool, "tier": wanted, "via": ctx.event.channel},
                outputs={
                    "chosen": tiers.chosen,
                    "tier": tiers.governing,
                    "soul": tiers.soul,
                    "kept_in": str(self.choices.path),
                },
                status=status,
                error_message=error,
                parent_id=ctx.receipt_id,
            )
        )

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
