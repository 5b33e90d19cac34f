"""One live session with one MCP server, on the official `mcp` SDK (stdio or streamable HTTP).

The SDK is imported here only, and only when a server is connected: a Lancelot without MCP
servers never loads it. The connection watches the server's message stream, so the
supervisor learns that a server died by awaiting `closed()`, not by polling it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from core.mcp.config import HttpServer, ServerSpec, StdioServer
from core.mcp.model import ToolHints, ToolInfo
from core.mcp.stderr import StderrPipe

if TYPE_CHECKING:
    import anyio
    import mcp_types
    from anyio.abc import ObjectReceiveStream, ObjectSendStream
    from mcp.client.session import ClientSession
    from mcp.shared.message import SessionMessage

# The only variables of Lancelot's own environment a stdio server gets (its entry's `env`
# adds to them): enough to find programs and a home, nothing secret.
INHERITED = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "LOGNAME")
MAX_PAGES = 50  # tools/list pages followed at most (a server that never stops paging)


def server_environment(entry: StdioServer) -> dict[str, str]:
    """A minimal environment plus the entry's own `env`: never Lancelot's keys or tokens."""
    base = {name: os.environ[name] for name in INHERITED if name in os.environ}
    return {**base, **entry.env}


class Connection:
    """An initialized session: list the server's tools, call one, await its end."""

    def __init__(self, session: ClientSession, closed: anyio.Event) -> None:
        self._session = session
        self._closed = closed

    async def list_tools(self) -> tuple[ToolInfo, ...]:
        """Every tool the server offers, pages followed."""
        from mcp_types import PaginatedRequestParams

        tools: list[ToolInfo] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self._session.list_tools(params=params)
            tools.extend(_tool_info(tool) for tool in page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tuple(tools)

    async def call(
        self, tool: str, arguments: dict[str, Any], within: float
    ) -> mcp_types.CallToolResult:
        """One tools/call; the SDK raises MCPError on timeout, a closed connection or an
        error answer."""
        return await self._session.call_tool(tool, arguments, read_timeout_seconds=within)

    @property
    def is_closed(self) -> bool:
        """Whether the server's message stream has ended."""
        return self._closed.is_set()

    async def closed(self) -> None:
        """Returns once the server's message stream has ended (it exited, or hung up)."""
        await self._closed.wait()


def _tool_info(tool: mcp_types.Tool) -> ToolInfo:
    """The SDK's Tool as Lancelot's own frozen record."""
    notes = tool.annotations
    hints = ToolHints(
        read_only=notes.read_only_hint if notes else None,
        destructive=notes.destructive_hint if notes else None,
        idempotent=notes.idempotent_hint if notes else None,
        open_world=notes.open_world_hint if notes else None,
    )
    return ToolInfo(tool.name, tool.description or "", dict(tool.input_schema), hints)


async def _forward(
    source: ObjectReceiveStream[SessionMessage | Exception],
    sink: ObjectSendStream[SessionMessage | Exception],
    closed: anyio.Event,
) -> None:
    """Pass the transport's messages to the session; mark the end when the stream ends."""
    import anyio

    try:
        async with sink:
            async for item in source:
                await sink.send(item)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass  # the session went first: it is shutting down
    finally:
        closed.set()


@contextlib.asynccontextmanager
async def _transport(
    spec: ServerSpec, stderr: StderrPipe | None, request_seconds: float
) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK transport for the entry: a started process (stdio) or an HTTP client."""
    entry = spec.entry
    if isinstance(entry, HttpServer):
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        client = httpx2.AsyncClient(
            headers=entry.headers, timeout=httpx2.Timeout(request_seconds, read=300)
        )
        async with client, streamable_http_client(entry.url, http_client=client) as streams:
            yield streams
        return
    from mcp.client.stdio import StdioServerParameters, stdio_client

    assert stderr is not None
    params = StdioServerParameters(
        command=entry.command,
        args=list(entry.args),
        env=server_environment(entry),
        cwd=entry.cwd,
    )
    async with stdio_client(params, errlog=stderr.writer) as streams:
        stderr.start()  # the process holds its own copy of the pipe now
        yield streams


@contextlib.asynccontextmanager
async def connect(
    spec: ServerSpec, stderr: StderrPipe | None, request_seconds: float
) -> AsyncIterator[Connection]:
    """Start (or reach) the server, initialize a session, and yield it; closing stops the
    server's process (the SDK's shutdown: stdin closed, then the whole process group).
    `request_seconds` bounds each request that has none of its own (initialize, tools/list)."""
    import anyio  # the SDK's async layer: loaded with the first server, as the SDK is
    from mcp.client.session import ClientSession
    from mcp.shared.message import SessionMessage

    closed = anyio.Event()
    async with contextlib.AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(_transport(spec, stderr, request_seconds))
        sink, watched = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        tasks = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(tasks.cancel_scope.cancel)  # runs before the group is awaited
        tasks.start_soon(_forward, read, sink, closed)
        session = await stack.enter_async_context(
            ClientSession(watched, write, read_timeout_seconds=request_seconds)
        )
        await session.initialize()
        yield Connection(session, closed)
