"""What a check found, and the report printed for a person (✓/✗ and the fix) or a script."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from core.config import Settings

T = TypeVar("T")


class Status(StrEnum):
    """How a check ended."""

    OK = "ok"
    FAILED = "failed"
    SKIPPED = "skipped"  # nothing to check (not configured), said honestly


@dataclass(frozen=True, slots=True)
class Finding:
    """One line of the report. `needed`: a failure here makes the exit code non-zero."""

    name: str
    status: Status
    detail: str
    fix: str = ""
    needed: bool = True


def ok(name: str, detail: str) -> Finding:
    """A check that passed."""
    return Finding(name, Status.OK, detail)


def failed(name: str, detail: str, fix: str, *, needed: bool = True) -> Finding:
    """A check that failed, with the fix in one line."""
    return Finding(name, Status.FAILED, detail, fix, needed)


def skipped(name: str, why: str) -> Finding:
    """Nothing to check."""
    return Finding(name, Status.SKIPPED, why, needed=False)


def broken(findings: Sequence[Finding]) -> bool:
    """Whether something needed failed (the exit code is 1 then)."""
    return any(f.status is Status.FAILED and f.needed for f in findings)


class Diagnosable(Protocol):
    """What the doctor reads of a channel's descriptor (`bot.channels.spec.ChannelSpec`)."""

    @property
    def label(self) -> str: ...
    @property
    def doctor(self) -> Callable[[Settings], Awaitable[list[Finding]]] | None: ...
    @property
    def clock_peer(self) -> Callable[[Settings], str | None]: ...


_MARKS = {Status.OK: "✓", Status.FAILED: "✗", Status.SKIPPED: "-"}


def render(findings: Sequence[Finding], seconds: float) -> str:
    """The report for a terminal: one line a check, the fix under each failure."""
    width = max((len(f.name) for f in findings), default=0)
    lines = []
    for f in findings:
        note = " (optional)" if f.status is Status.FAILED and not f.needed else ""
        lines.append(f"{_MARKS[f.status]} {f.name.ljust(width)}  {f.detail}{note}")
        if f.status is Status.FAILED:
            lines.append(f"  {' ' * width}  fix: {f.fix}")
    needed = sum(f.status is Status.FAILED and f.needed for f in findings)
    optional = sum(f.status is Status.FAILED and not f.needed for f in findings)
    if needed:
        verdict = f"{needed} needed check{'s' if needed > 1 else ''} failed"
    else:
        verdict = "nothing needed is broken"
    extra = f"; {optional} optional part{'s' if optional > 1 else ''} missing" if optional else ""
    lines.append(f"{verdict}{extra} ({seconds:.1f} s)")
    return "\n".join(lines)


def to_json(findings: Sequence[Finding], seconds: float) -> dict[str, Any]:
    """The report for scripts."""
    return {
        "ok": not broken(findings),
        "seconds": round(seconds, 3),
        "checks": [{**asdict(f), "status": str(f.status)} for f in findings],
    }


async def in_thread(work: Callable[[], T]) -> T:
    """Run blocking `work` in a daemon thread: a check that hangs past its timeout must not
    keep the process from exiting (the default executor is joined at exit)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return  # timed out meanwhile
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        try:
            result, error = work(), None
        except BaseException as exc:  # handed to the awaiting task
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="doctor-check", daemon=True).start()
    return await future
