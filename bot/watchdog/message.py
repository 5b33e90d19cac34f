"""The watchdog's two messages, in plain text (no markup: a log line is shown as written),
with what it knows: the last heartbeat, whether it was a clean stop, the last log line."""

from __future__ import annotations

import os
import time
from pathlib import Path
from zoneinfo import ZoneInfo

from core.clock import spoken_time
from core.health.heartbeat import BeatState, Heartbeat
from core.health.watch import Notice, NoticeKind
from core.receipts.redaction import Redactor

LOG_FILE = Path("logs") / "lancelot.log"
TAIL_BYTES = 8192  # enough for the last line of any log record but a traceback's middle
LINE_CHARS = 300
DOWN_MARK = "Lancelot is not answering"
BACK_MARK = "Lancelot is back"


def when(ts: float, zone: str) -> str:
    """Epoch seconds as the owner reads them, in their zone (core.clock.spoken_time)."""
    return spoken_time(ts, ZoneInfo(zone), time.time())


def lasted(seconds: float) -> str:
    """A duration in whole seconds, minutes or hours."""
    whole = max(0, round(seconds))
    if whole < 120:
        return f"{whole} s"
    if whole < 7200:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def last_log_line(home: Path, redactor: Redactor) -> str | None:
    """The last non-empty line of Lancelot's log, redacted and cut short; None without one."""
    try:
        with open(home / LOG_FILE, "rb") as log:
            size = log.seek(0, os.SEEK_END)
            log.seek(max(0, size - TAIL_BYTES))
            tail = log.read().decode("utf-8", "replace")
    except OSError:
        return None
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if not lines:
        return None
    line = redactor.text(lines[-1])
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"


def _beat_line(beat: Heartbeat, zone: str) -> str:
    return f"{when(beat.at, zone)} (pid {beat.pid}, running since {when(beat.started, zone)})"


def render(notice: Notice, log_line: str | None, zone: str) -> str:
    """The message for `notice`, its times in the owner's `zone`; `log_line` is the log's
    last line when it was written."""
    if notice.kind is NoticeKind.BACK:
        return _render_back(notice, zone)
    lines = [f"⚠️ {DOWN_MARK}: no heartbeat for {lasted(notice.silent)}."]
    if notice.last is None:
        lines.append("Last heartbeat: none since the watchdog started.")
    else:
        lines.append(f"Last heartbeat: {_beat_line(notice.last, zone)}.")
    if notice.final is not None and notice.final.state is BeatState.STOPPING:
        lines.append(f"It stopped cleanly at {when(notice.final.at, zone)}.")
    lines.append(f"Last log line: {log_line}" if log_line else "Last log line: none.")
    lines.append("I will tell you when it is back.")
    return "\n".join(lines)


def _render_back(notice: Notice, zone: str) -> str:
    back = notice.back
    since = f" (pid {back.pid}, running since {when(back.started, zone)})" if back else ""
    return f"✅ {BACK_MARK}{since}, after {lasted(notice.silent)} without a heartbeat."
