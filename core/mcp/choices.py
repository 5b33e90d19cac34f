"""The owner's switches for MCP servers and their tools, as set from /mcp: kept in
`LANCELOT_HOME/mcp_choices.json` so a choice survives a restart. Everything is on until the
owner turns it off; mcp.json's own `"disabled"` is the operator's and is not kept here. A
tool's tier the owner chose (ask first, or run without asking) is kept here too; governance
reads it (core/mcp/naming.py, governing_tier)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, cast

from core.mcp.naming import split_capability
from soul.schema import TIERS, Tier

log = logging.getLogger(__name__)

CHOICES_FILE = "mcp_choices.json"


class McpChoices:
    """Which servers and tools the owner turned off; written through at each change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._servers: dict[str, bool] = {}
        self._tools: dict[str, dict[str, bool]] = {}
        self._tiers: dict[str, dict[str, Tier]] = {}
        self._read()

    def _read(self) -> None:
        """Load the file; a missing one is no choice yet, a broken one is one warning line
        (and every server and tool stays on)."""
        try:
            data: Any = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            log.warning("MCP choices: %s cannot be read (%s); every server and tool is on",
                        self.path, exc)  # fmt: skip
            return
        servers = data.get("servers") if isinstance(data, dict) else None
        tools = data.get("tools") if isinstance(data, dict) else None
        self._tiers = _tiers(data.get("tiers") if isinstance(data, dict) else None)
        if isinstance(servers, dict):
            self._servers = {str(k): bool(v) for k, v in servers.items()}
        if isinstance(tools, dict):
            self._tools = {
                str(server): {str(k): bool(v) for k, v in chosen.items()}
                for server, chosen in tools.items()
                if isinstance(chosen, dict)
            }

    def server_on(self, server: str) -> bool:
        """Whether the owner left `server` on."""
        return self._servers.get(server, True)

    def tool_on(self, server: str, tool: str) -> bool:
        """Whether the owner left this tool of `server` on."""
        return self._tools.get(server, {}).get(tool, True)

    def tier(self, server: str, tool: str) -> Tier | None:
        """The tier the owner chose for this tool of `server` (None: they chose none)."""
        return self._tiers.get(server, {}).get(tool)

    def chosen_tier(self, capability: str) -> Tier | None:
        """The owner's tier for an MCP tool's capability (`mcp.<server>.<tool>`); None for
        any other capability, or a tool they chose no tier for."""
        found = split_capability(capability)
        return self.tier(*found) if found is not None else None

    def set_tier(self, server: str, tool: str, tier: Tier | None) -> None:
        """Keep the owner's tier for one tool (None: back to what the Soul and the server
        say); OSError when it cannot be kept."""
        chosen = self._tiers.setdefault(server, {})
        if tier is None:
            chosen.pop(tool, None)
        else:
            chosen[tool] = tier
        self._write()

    def switched_off(self) -> frozenset[str]:
        """The servers the owner turned off."""
        return frozenset(name for name, on in self._servers.items() if not on)

    def set_server(self, server: str, on: bool) -> None:
        """Turn `server` on or off and keep the choice (OSError when it cannot be kept)."""
        self._servers[server] = on
        self._write()

    def set_tool(self, server: str, tool: str, on: bool) -> None:
        """Turn one tool of `server` on or off and keep the choice."""
        self._tools.setdefault(server, {})[tool] = on
        self._write()

    def _write(self) -> None:
        """Replace the file at once, readable by the owner only."""
        kept = {"servers": self._servers, "tools": self._tools, "tiers": self._tiers}
        text = json.dumps(kept, indent=2)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.path)


def _tiers(data: object) -> dict[str, dict[str, Tier]]:
    """The tiers kept in the file; an entry that names no tier is dropped with a warning (a
    hand-edited file must not leave a tool at a tier nobody chose)."""
    if not isinstance(data, dict):
        return {}
    kept: dict[str, dict[str, Tier]] = {}
    for server, chosen in data.items():
        if not isinstance(chosen, dict):
            continue
        for tool, tier in chosen.items():
            if tier in TIERS:
                kept.setdefault(str(server), {})[str(tool)] = cast(Tier, tier)
            else:
                log.warning("MCP choices: %s.%s's tier %r is none of %s; ignored",
                            server, tool, tier, ", ".join(TIERS))  # fmt: skip
    return kept
