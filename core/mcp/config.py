"""mcp.json: the MCP servers the owner declared, in the ecosystem's own format.

`{"mcpServers": {"<name>": {"command": ..., "args": [...], "env": {...}}}}` for a server
Lancelot starts (stdio), `{"<name>": {"url": ..., "headers": {...}}}` for one it reaches over
streamable HTTP; the `mcpServers` wrapper may be left out. Lancelot's own keys ride along:
`"disabled"`, `"sandbox"` (run a stdio server in the sandbox container) and `"network"`.

A broken file is one line naming it and the problem, and no server; a bad entry is one line
naming the file and that server, and the others still load. Nothing here imports the `mcp`
SDK: reading the file costs a JSON parse.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from core.config.settings import Settings, WebAddress

CONFIG_FILE = "mcp.json"
# A name the model's tool table can spell and split again: `mcp__<server>__<tool>` must fit
# the 64 characters a provider's API takes for a tool's name, and `__` ends the server's part.
SERVER_NAME = re.compile(r"^(?!.*__)[A-Za-z0-9][A-Za-z0-9_-]{0,23}$")


class _Entry(BaseModel):
    """The keys every server entry may carry besides how to reach it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    disabled: bool = False
    """Declared but not started."""
    network: bool = False
    """With `sandbox`, whether the container gets a network."""


class StdioServer(_Entry):
    """A server Lancelot starts and talks to over its stdin and stdout."""

    command: str = Field(min_length=1)
    args: tuple[str, ...] = ()
    env: dict[str, str] = {}
    """Given to this server's process only, over a minimal environment (never Lancelot's)."""
    cwd: Path | None = None
    sandbox: bool = False
    """Run inside the sandbox container (the wiring that does it lives with the sandbox)."""
    transport: Literal["stdio"] = Field(default="stdio", exclude=True)


class HttpServer(_Entry):
    """A server reached over streamable HTTP."""

    url: WebAddress
    headers: dict[str, str] = {}
    """Sent to this server only (an API key, a bearer token)."""
    transport: Literal["http"] = Field(default="http", exclude=True)


def _kind(entry: Any) -> str:
    """Which entry shape `entry` means: a `url` makes it HTTP, anything else stdio."""
    return "http" if isinstance(entry, dict) and "url" in entry else "stdio"


ServerEntry = Annotated[StdioServer | HttpServer, Field(discriminator="transport")]
_ADAPTER: TypeAdapter[StdioServer | HttpServer] = TypeAdapter(ServerEntry)


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One declared server: its name and its validated entry."""

    name: str
    entry: StdioServer | HttpServer

    @property
    def secrets(self) -> tuple[str, ...]:
        """The values only this server may see (its env values, its header values)."""
        if isinstance(self.entry, StdioServer):
            return tuple(self.entry.env.values())
        return tuple(self.entry.headers.values())


@dataclass(frozen=True, slots=True)
class McpConfig:
    """What the file declared: the servers that loaded, and one line per problem."""

    path: Path
    servers: tuple[ServerSpec, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every server's secret values, for the redactor."""
        return tuple(value for server in self.servers for value in server.secrets)


def config_path(settings: Settings) -> Path:
    """The file named by `mcp.config` (`$LANCELOT_MCP_CONFIG`), else LANCELOT_HOME/mcp.json."""
    return settings.mcp.config or settings.home / CONFIG_FILE


def _problem(error: ValidationError) -> str:
    """The first thing pydantic found wrong, as `key: message` (values are never quoted:
    they may be secrets). An unknown key comes first: a typo explains a missing key."""
    errors = error.errors()
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    where = ".".join(str(part) for part in first["loc"][1:])  # [0] is the shape's tag
    message = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
    return f"{where}: {message}" if where else message


def _entry(path: Path, name: str, raw: Any) -> ServerSpec | str:
    """The server `name`, or the one line that says why its entry is unusable."""
    if not SERVER_NAME.match(name):
        return (
            f"{path}: server {name!r}: a name is letters, digits, '-' or '_' (24 at most, no '__')"
        )
    if not isinstance(raw, dict):
        return f"{path}: server {name}: an entry is an object with a command or a url"
    try:
        entry = _ADAPTER.validate_python({**raw, "transport": _kind(raw)})
    except ValidationError as exc:
        return f"{path}: server {name}: {_problem(exc)}"
    return ServerSpec(name, entry)


def _servers_object(path: Path, data: Any) -> dict[str, Any] | str:
    """The name -> entry mapping inside the file, or why there is none."""
    if not isinstance(data, dict):
        return f"{path}: the top level must be an object of servers"
    servers = data.get("mcpServers", data)
    if not isinstance(servers, dict):
        return f"{path}: mcpServers must be an object of servers"
    return servers


def load_config(path: Path) -> McpConfig:
    """The servers `path` declares; no file means no servers. Never raises for its content."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return McpConfig(path)
    except (OSError, UnicodeDecodeError) as exc:
        return McpConfig(path, problems=(f"{path}: cannot read: {exc}",))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return McpConfig(path, problems=(f"{path}: line {exc.lineno}: {exc.msg}",))
    servers = _servers_object(path, data)
    if isinstance(servers, str):
        return McpConfig(path, problems=(servers,))
    loaded: list[ServerSpec] = []
    problems: list[str] = []
    for name, raw in servers.items():
        found = _entry(path, name, raw)
        if isinstance(found, str):
            problems.append(found)
        else:
            loaded.append(found)
    return McpConfig(path, tuple(loaded), tuple(problems))
