"""Processes that tests start, stopped completely: each in a session of its own, so one
kill reaches every child it forked (a browser's zygote and renderers, a server's workers);
its pipes read to their end and closed, and its exit reaped, before the event loop closes.

A child that inherits a pipe keeps it open after its parent dies; the loop then closes with a
transport still open, which uvloop reports as an error in a later test (one run in eight).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Callable
from typing import Any

# How long a killed group may take to let go of its pipes before they are closed by hand.
LET_GO = 10.0


async def spawn(*argv: str, **options: Any) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec` in a new session: the process leads its own group."""
    return await asyncio.create_subprocess_exec(*argv, start_new_session=True, **options)


@contextlib.asynccontextmanager
async def spawned(*argv: str, **options: Any) -> AsyncIterator[asyncio.subprocess.Process]:
    """A process (see `spawn`) that is `reap`ed however the block ends."""
    process = await spawn(*argv, **options)
    try:
        yield process
    finally:
        await reap(process)


def kill_group(process: asyncio.subprocess.Process, sig: int = signal.SIGKILL) -> None:
    """Send `sig` to the process's whole group (it leads one: see `spawn`); quiet when every
    member has gone already."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


async def reap(process: asyncio.subprocess.Process) -> None:
    """Kill the process and everything it started, read its pipes to their end, and wait for
    its exit: no child, pipe or transport is left behind. Safe to call twice."""
    kill_group(process)
    if process.stdin is not None:
        with contextlib.suppress(OSError, RuntimeError):
            process.stdin.close()
    for stream in (process.stdout, process.stderr):
        if stream is None:
            continue
        try:
            async with asyncio.timeout(LET_GO):
                while await stream.read(65536):
                    pass
        except (TimeoutError, ValueError, OSError):
            kill_group(process)  # someone held on: no one may, once the group is gone
    await process.wait()
    _close_transport(process)


def _close_transport(process: asyncio.subprocess.Process) -> None:
    """Close the subprocess transport itself, so none outlives the test that made it."""
    transport = getattr(process, "_transport", None)
    if transport is not None and not transport.is_closing():
        transport.close()


def forked(work: Callable[[], str]) -> str:
    """`work`'s answer, run in a forked child (to change user, or to load a module afresh,
    leaving this process as it was); what it raised, named, if it failed."""
    read, written = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read)
            os.write(written, work().encode())
            code = 0
        except BaseException as exc:  # the parent reads what went wrong
            os.write(written, f"{type(exc).__name__}: {exc}".encode())
        finally:
            os._exit(code)
    os.close(written)
    with os.fdopen(read) as answer:
        said = answer.read()
    os.waitpid(pid, 0)
    return said
