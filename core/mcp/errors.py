"""Why a server or a call failed, in one short line: the SDK's errors, anyio's exception
groups and a missing program all said the same plain way."""

from __future__ import annotations

MAX_REASON = 300
REQUEST_TIMEOUT = -32001  # mcp_types.REQUEST_TIMEOUT (kept here: no SDK import to say it)
CONNECTION_CLOSED = -32000  # mcp_types.CONNECTION_CLOSED


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside nested exception groups (anyio's task groups wrap them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException, program: str | None = None) -> str:
    """`exc` as one line for the owner and the log (not yet masked: the caller masks it);
    `program` is the command a stdio server is started with (an OSError may not name it)."""
    leaf = _leaf(exc)
    code = getattr(getattr(leaf, "error", None), "code", None)
    if code == REQUEST_TIMEOUT:
        text = "no answer in time"
    elif code == CONNECTION_CLOSED:
        text = "the connection to the server closed"
    elif isinstance(leaf, FileNotFoundError | PermissionError):
        why = "no such program" if isinstance(leaf, FileNotFoundError) else "permission denied"
        text = f"cannot start the server: {why} {leaf.filename or program or ''}".rstrip()
    else:
        message = str(getattr(getattr(leaf, "error", None), "message", None) or leaf)
        text = f"{type(leaf).__name__}: {message}" if message else type(leaf).__name__
    line = " ".join(text.split())
    return line if len(line) <= MAX_REASON else line[: MAX_REASON - 1] + "…"
