"""config/scheduler.yaml: the declared jobs, validated before anything is scheduled."""

from __future__ import annotations

import zoneinfo
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.config.settings import TimeZone, known_zone
from core.errors import ConfigError
from core.scheduler.crontab import crontab_trigger

Tier = Literal["T0", "T1", "T2", "T3"]

# Used when the file is missing: the four jobs every install has.
DEFAULT_JOBS: dict[str, dict[str, object]] = {
    "health_sweep": {"run": "builtin:health_sweep", "every_seconds": 60, "grace_seconds": 30},
    "memory_cleanup": {
        "run": "builtin:memory_cleanup",
        "cron": "0 3 * * *",
        "grace_seconds": 21600,
        "tier": "T1",
    },
    "daily_digest": {"run": "builtin:daily_digest", "cron": "0 8 * * *", "grace_seconds": 14400},
    "credential_rotation": {
        "run": "builtin:credential_rotation",
        "cron": "0 4 1 * *",
        "enabled": False,
        "requires_approval": True,
        "tier": "T3",
    },
}


class JobSpec(BaseModel):
    """One declared job: what runs, when, and what must hold before it may."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = ""
    run: str = Field(pattern=r"^(builtin|skill):[a-z0-9_.-]+$")
    every_seconds: float | None = Field(default=None, gt=0)
    cron: str | None = None
    at: float | None = None  # once, at this time (epoch seconds): a reminder from chat
    timezone: TimeZone | None = None  # the file's timezone when unset
    enabled: bool = True
    grace_seconds: float = Field(default=300.0, ge=0)
    needs_local_model: bool = False
    uses_flagship: bool = False  # calls the paid models: paused while a budget is used up
    requires_approval: bool = False
    tier: Tier = "T0"
    args: dict[str, Any] = Field(default_factory=dict)  # a skill's inputs

    @model_validator(mode="after")
    def _one_trigger(self) -> JobSpec:
        if [self.every_seconds, self.cron, self.at].count(None) != 2:
            raise ValueError("give exactly one of every_seconds or cron")
        if self.cron is not None:
            try:
                crontab_trigger(self.cron, "UTC")
            except ValueError as exc:
                raise ValueError(f"cron {self.cron!r}: {exc}") from None
        return self

    @property
    def describe_trigger(self) -> str:
        """'every 60 s', 'cron 0 8 * * * (UTC)' or 'once at 2026-11-23 09:00 (UTC)'."""
        if self.every_seconds is not None:
            return f"every {self.every_seconds:g} s"
        if self.at is not None:
            zone = zoneinfo.ZoneInfo(self.timezone or "UTC")
            return f"once at {datetime.fromtimestamp(self.at, zone):%Y-%m-%d %H:%M} ({zone})"
        return f"cron {self.cron} ({self.timezone or 'UTC'})"


class SchedulerFile(BaseModel):
    """The whole file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timezone: TimeZone = "UTC"
    jobs: dict[str, JobSpec] = Field(default_factory=dict)


def _read(path: Path) -> object:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"jobs": DEFAULT_JOBS}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{path}:{where} {problem}") from None


def load_jobs(
    path: Path, *, timezone: str | None = None, digest_time: str | None = None
) -> tuple[JobSpec, ...]:
    """The jobs declared in `path` (the defaults when it does not exist), each with its name
    and timezone filled in. `timezone` and `digest_time` (HH:MM) are the settings' overrides.

    Raises ConfigError with one line naming the file, the key and what is wrong.
    """
    data = _read(path)
    try:
        parsed = SchedulerFile.model_validate(data or {})
        zone = known_zone(timezone) if timezone else parsed.timezone
    except (ValidationError, ValueError) as exc:
        raise ConfigError(_describe(exc, path)) from None
    jobs = []
    for name, spec in parsed.jobs.items():
        changes: dict[str, object] = {"name": name, "timezone": spec.timezone or zone}
        if name == "daily_digest" and digest_time and spec.cron is not None:
            hour, minute = digest_time.split(":")
            changes["cron"] = f"{int(minute)} {int(hour)} * * *"
        jobs.append(spec.model_copy(update=changes))
    return tuple(jobs)


def _describe(exc: ValidationError | ValueError, path: Path) -> str:
    if not isinstance(exc, ValidationError):
        return f"{path}: timezone: {exc}"
    first = exc.errors()[0]
    key = ".".join(str(part) for part in first["loc"]) or "(top level)"
    message = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
    return f"{path}: {key}: {message.removeprefix('Value error, ')}"
