"""Running one command in an overlay slot: its output, exit code and time limit."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

from core.errors import ToolFailed
from core.tools.base import ToolResult
from core.tools.effects.overlay import OverlaySlot, close_stream, raw_socket
from core.tools.sandbox.engine import DockerEngine, SandboxUnavailable
from core.tools.sandbox.output import OutputSink

TIMED_OUT = 124  # what timeout(1) answers, so the owner recognises it
KILL_GRACE = 10.0  # how long to wait for the reader once its container is killed
WAIT_LIMIT = 30  # seconds for the engine to report the exit code of a stopped container


class NotStarted(SandboxUnavailable):
    """The slot could not take the command (its container died); nothing ran."""


async def run_in_slot(
    engine: DockerEngine, slot: OverlaySlot, command: str, limit: float
) -> ToolResult:
    """Run `command` in `slot` and return when its container has stopped, so nothing can
    still be writing to the upper layer. A command past `limit` seconds, or flooding its
    output, is killed with its container and answers exit code 124."""
    sink = OutputSink()
    reader = asyncio.ensure_future(asyncio.to_thread(_talk, engine, slot, command, sink))
    done, _ = await asyncio.wait({reader}, timeout=limit)
    if reader in done and not sink.overflowed:
        exit_code = reader.result()
        text, cut = sink.text()
        return ToolResult(exit_code, text, cut)
    await asyncio.to_thread(_kill_and_wait, engine, slot.container)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(reader, KILL_GRACE)
    text, _ = sink.text()
    why = (
        f"killed: output passed {sink.total:,} bytes"
        if sink.overflowed
        else f"killed: still running after {limit:g} s"
    )
    return ToolResult(TIMED_OUT, f"{text}\n[{why}]".strip(), True)


def _talk(engine: DockerEngine, slot: OverlaySlot, command: str, sink: OutputSink) -> int:
    """Send the command, read its output to the end, then the exit code (blocking)."""
    from docker.errors import DockerException
    from docker.utils.socket import frames_iter
    from requests import RequestException

    try:
        raw = raw_socket(slot.stream)
        raw.sendall(command.encode("utf-8", "surrogateescape"))
        raw.shutdown(socket.SHUT_WR)  # end of stdin: the launcher runs what it read
    except OSError as exc:
        close_stream(slot.stream)
        raise NotStarted(f"the sandbox could not start the command: {exc}") from None
    try:
        for _, chunk in frames_iter(slot.stream, tty=False):
            sink.add(chunk)
            if sink.overflowed:
                return TIMED_OUT
    except OSError as exc:
        raise ToolFailed(f"the sandbox connection broke during the command ({exc})") from None
    finally:
        close_stream(slot.stream)
    try:
        status: Any = engine.api.wait(slot.container, timeout=WAIT_LIMIT)
    except (DockerException, RequestException, OSError) as exc:
        engine.reset()
        raise ToolFailed(
            f"the sandbox engine stopped answering during the command ({type(exc).__name__})"
        ) from None
    code = status.get("StatusCode") if isinstance(status, dict) else None
    return int(code) if code is not None else TIMED_OUT


def _kill_and_wait(engine: DockerEngine, container: str) -> None:
    """Kill the container and wait until it has stopped (its processes are gone)."""
    with contextlib.suppress(Exception):
        engine.api.kill(container)
    with contextlib.suppress(Exception):
        engine.api.wait(container, timeout=WAIT_LIMIT)
