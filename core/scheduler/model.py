"""scheduler.db's records: a job's state, a line of run history, a job created from chat, and
how a run ended."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Outcome(StrEnum):
    """How a run ended."""

    RUNNING = "running"
    OK = "ok"
    FAILED = "failed"
    SKIPPED = "skipped"
    MISSED = "missed"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True, slots=True)
class JobState:
    """A job's row: when it runs next (None: not scheduled) and how it last went."""

    name: str
    next_run_at: float | None
    paused: bool
    last_run_at: float | None
    last_outcome: str | None
    last_detail: str | None


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One line of history."""

    id: int
    job: str
    scheduled_for: float
    started_at: float
    finished_at: float | None
    trigger: str
    outcome: str
    gate: str | None
    detail: str | None
    missed: int


@dataclass(frozen=True, slots=True)
class ChatJobRow:
    """A job the owner created from chat: once `at` (epoch seconds) or by `cron`; a
    reminder, or a task the agent does in the chat (channel, sender, chat) it came from."""

    name: str
    at: float | None
    cron: str | None
    timezone: str
    what: str
    tier: str
    created_at: float
    kind: str = "reminder"
    channel: str = ""
    sender: str = ""
    chat: str = ""
