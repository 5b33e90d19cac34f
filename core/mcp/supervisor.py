"""The MCP servers, supervised: each connects in the background, is started again with
exponential backoff when it dies, and says where it stands; calls go through here, bounded in
time and size.

Lancelot is ready without its servers: entering `McpServers` only starts one background task
per server. The SDK is imported when the first server connects, not before.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from core.mcp.config import McpConfig, ServerSpec, StdioServer
from core.mcp.connection import Connection, connect
from core.mcp.errors import describe
from core.mcp.model import CallResult, ServerState, Status
from core.mcp.results import answer_text, cut, structured_within
from core.mcp.stderr import StderrPipe
from core.receipts.redaction import Redactor
from core.runtime.backoff import Backoff, BackoffConfig
from core.runtime.tasks import Supervisor

if TYPE_CHECKING:
    import mcp_types

log = logging.getLogger(__name__)


RESTART = BackoffConfig(min_delay=1.0, max_delay=300.0, factor=2.0)
# The entry that runs a `"sandbox": true` stdio entry inside the sandbox (bot/mcp.py wires
# core/tools/sandbox/interactive.py); it raises, saying why, when there is no sandbox.
Confinement = Callable[[StdioServer], Awaitable[StdioServer]]
NO_SANDBOX = "no sandbox to run it in here; not started outside it"


@dataclass(frozen=True, slots=True)
class McpLimits:
    """The bounds on connecting and calling (settings `mcp.*`)."""

    connect_timeout: float = 30.0
    call_timeout: float = 60.0
    max_result_chars: int = 20_000
    restart: BackoffConfig = RESTART
    stable_after: float = 60.0  # a server up this long starts its backoff over when it dies


class McpServers:
    """Every declared server, kept running; an async context manager."""

    def __init__(
        self,
        config: McpConfig,
        redactor: Redactor,
        tasks: Supervisor,
        limits: McpLimits,
        switched_off: Collection[str] = (),
        sandbox: Confinement | None = None,
    ) -> None:
        """`sandbox`: how a `"sandbox": true` server is run (None: it is not run at all)."""
        self._specs = {spec.name: spec for spec in config.servers}
        self._sandbox = sandbox
        self._redactor = redactor
        self._tasks = tasks
        self._limits = limits
        self._connections: dict[str, Connection] = {}
        self._states = {
            spec.name: _first_state(spec, spec.name in switched_off, sandbox is not None)
            for spec in config.servers
        }
        self._changed = asyncio.Condition()
        self._running: dict[str, asyncio.Task[None]] = {}
        self._listeners: list[Callable[[ServerState], None]] = []
        for secret in config.secrets:  # no log line or receipt shows a server's secrets
            redactor.add_secret(secret)

    async def __aenter__(self) -> McpServers:
        for spec in self._specs.values():
            if self._states[spec.name].status == "connecting":
                self._start(spec)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        running = list(self._running.values())
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
        self._running.clear()

    def _start(self, spec: ServerSpec) -> None:
        task = self._tasks.spawn(self._keep_running(spec), name=f"mcp {spec.name}")
        self._running[spec.name] = task

    def on_change(self, listener: Callable[[ServerState], None]) -> None:
        """Call `listener` with a server's new state each time one changes (the tool
        registry follows the servers so)."""
        self._listeners.append(listener)

    async def disable(self, server: str) -> None:
        """Stop `server` and keep it stopped (the owner switched it off)."""
        task = self._running.pop(server, None)
        if task is not None:
            task.cancel()
            await asyncio.wait([task])
        await self._set(server, "disabled", tools=())

    async def enable(self, server: str) -> None:
        """Start `server` again if it was switched off (its entry's `disabled` still holds)."""
        spec = self._specs[server]
        if self._states[server].status == "disabled" and not spec.entry.disabled:
            await self._set(server, "connecting")
            self._start(spec)

    def states(self) -> tuple[ServerState, ...]:
        """Every declared server's state, in the file's order."""
        return tuple(self._states.values())

    def state(self, server: str) -> ServerState | None:
        """The state of `server`, or None when no such server is declared."""
        return self._states.get(server)

    async def health(self, server: str) -> str | None:
        """For the health monitor: None while `server` is ready, connecting or switched off;
        why it is down, and when it is tried again, when it failed."""
        state = self._states[server]
        if state.status != "failed":
            return None
        again = f"; trying again in {state.retry_in:.0f} s" if state.retry_in is not None else ""
        return f"MCP server {server} is down ({state.reason}){again}"

    def summary(self) -> str:
        """Every server's state in one line, for /status: `git ready (12 tools), time off`."""
        said = [
            f"{s.name} {s.status}" + (f" ({len(s.tools)} tools)" if s.status == "ready" else "")
            for s in self._states.values()
        ]
        return ", ".join(said) or "none declared"

    async def wait_for(
        self, server: str, settled: Callable[[ServerState], bool], within: float
    ) -> ServerState:
        """The state of `server` once `settled(state)` holds (TimeoutError after `within` s)."""
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(lambda: settled(self._states[server]))
            return self._states[server]

    async def _set(self, name: str, status: Status, **fields: Any) -> None:
        """Record a new state for `name` and wake whoever waits on a change."""
        self._states[name] = dataclasses.replace(
            self._states[name], status=status, **{"reason": None, "retry_in": None, **fields}
        )
        for listener in self._listeners:
            listener(self._states[name])
        async with self._changed:
            self._changed.notify_all()

    async def _keep_running(self, spec: ServerSpec) -> None:
        """Connect, serve until the server dies, wait out the backoff, and again."""
        backoff = Backoff(self._limits.restart)
        delays: list[float] = []
        while True:
            await self._set(spec.name, "connecting", failures=len(delays), delays=tuple(delays))
            started = time.monotonic()
            reason = await self._serve_once(spec)
            if time.monotonic() - started >= self._limits.stable_after:
                backoff.reset()
                delays.clear()
            delay = next(backoff)
            delays.append(delay)
            log.warning("MCP server %s stopped (%s); starting it again in %.1f s",
                        spec.name, reason, delay)  # fmt: skip
            await self._set(
                spec.name, "failed", reason=reason, failures=len(delays),
                retry_in=delay, delays=tuple(delays),
            )  # fmt: skip
            await asyncio.sleep(delay)

    async def _serve_once(self, spec: ServerSpec) -> str:
        """One life of the server; returns why it ended (one line, masked, with the last
        line it wrote on stderr). Its stderr pipe is closed however the life ends."""
        stderr = StderrPipe(spec.name, self._redactor) if _is_stdio(spec) else None
        try:
            reason = await self._live(spec, stderr)
            last = await stderr.tail() if stderr is not None else None
        finally:
            if stderr is not None:
                await stderr.aclose()
        return self._redactor.text(f"{reason}; it said: {last}" if last else reason)

    async def _live(self, spec: ServerSpec, stderr: StderrPipe | None) -> str:
        """Connect, list the tools, be ready until the server ends; why it ended."""
        program = spec.entry.command if isinstance(spec.entry, StdioServer) else None
        try:
            spec = await self._confined(spec)
            async with connect(spec, stderr, self._limits.connect_timeout) as connection:
                tools = await connection.list_tools()
                self._connections[spec.name] = connection
                await self._set(spec.name, "ready", tools=tools)
                log.info("MCP server %s is ready with %d tools", spec.name, len(tools))
                await connection.closed()
                return "the server closed the connection"
        except Exception as exc:  # whatever ends a life is reported, and it starts again
            return describe(exc, program)
        finally:
            self._connections.pop(spec.name, None)

    async def _confined(self, spec: ServerSpec) -> ServerSpec:
        """The spec as started: a sandboxed server's entry runs it in the sandbox."""
        entry = spec.entry
        if not isinstance(entry, StdioServer) or not entry.sandbox:
            return spec
        if self._sandbox is None:
            raise RuntimeError(NO_SANDBOX)
        return ServerSpec(spec.name, await self._sandbox(entry))

    async def call(self, server: str, tool: str, arguments: object) -> CallResult:
        """Call `tool` on `server` with `arguments` (the model's, so anything: only an object
        is sent), within the time and size bounds. Never raises for a failed call: the
        result carries the error in one line."""
        started = time.perf_counter()
        refusal = self._refusal(server, tool)
        connection = self._connections.get(server)
        if refusal is None and connection is None:
            refusal = self._not_ready(server)
        if not isinstance(arguments, Mapping):
            refusal = refusal or "the arguments must be an object of named values"
        if refusal is not None or connection is None or not isinstance(arguments, Mapping):
            return _failed(server, tool, refusal or "not ready", started)
        try:
            answer = await connection.call(tool, dict(arguments), self._limits.call_timeout)
        except Exception as exc:  # the call failed, the server may live on: said, not raised
            return _failed(server, tool, self._redactor.text(describe(exc)), started)
        return self._bounded(server, tool, answer, started)

    def _refusal(self, server: str, tool: str) -> str | None:
        """Why the call cannot even be tried, or None."""
        state = self._states.get(server)
        if state is None:
            return f"no MCP server is called {server!r}"
        if state.status == "ready" and state.tool(tool) is None:
            return f"server {server} has no tool {tool!r}"
        return None

    def _not_ready(self, server: str) -> str:
        state = self._states[server]
        why = f": {state.reason}" if state.reason else ""
        return f"server {server} is not ready ({state.status}{why})"

    def _bounded(
        self, server: str, tool: str, answer: mcp_types.CallToolResult, started: float
    ) -> CallResult:
        """The answer as a CallResult: text cut to the limit, structured content if small."""
        limit = self._limits.max_result_chars
        text = answer_text(answer)
        shown, truncated = cut(text, limit)
        structured = structured_within(answer.structured_content, limit)
        return CallResult(
            server, tool, shown, _since(started), size=len(text),
            truncated=truncated or (structured is None and answer.structured_content is not None),
            is_error=answer.is_error, structured=structured,
        )  # fmt: skip


def _first_state(spec: ServerSpec, switched_off: bool, sandboxed: bool) -> ServerState:
    """Disabled servers (in mcp.json or by the owner) stay so; one to run in the sandbox
    fails when there is none (`sandboxed` False), never starting outside it; the rest
    connect."""
    transport: Literal["stdio", "http"] = "stdio" if _is_stdio(spec) else "http"
    if spec.entry.disabled or switched_off:
        return ServerState(spec.name, transport, "disabled")
    if isinstance(spec.entry, StdioServer) and spec.entry.sandbox and not sandboxed:
        return ServerState(spec.name, transport, "failed", reason=NO_SANDBOX)
    return ServerState(spec.name, transport, "connecting")


def _is_stdio(spec: ServerSpec) -> bool:
    return isinstance(spec.entry, StdioServer)


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _failed(server: str, tool: str, error: str, started: float) -> CallResult:
    return CallResult(server, tool, "", _since(started), size=0, error=error)
