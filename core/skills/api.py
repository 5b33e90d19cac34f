"""The public skill API: the only part of Lancelot that code in skills/ may import."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from core.tools.action import ToolAction

__all__ = ["ActionOutcome", "ActionStatus", "SkillContext", "SkillFailed", "ToolAction"]


class ActionStatus(StrEnum):
    """How a governed action asked for by a skill ended."""

    DONE = "done"  # it ran; see exit_code
    FAILED = "failed"  # it ran (or tried to) and failed
    DENIED = "denied"  # the Soul refuses it; see rule and alternatives
    WAITING_APPROVAL = "waiting_approval"  # an approval card went to the owner
    NOT_PERMITTED = "not_permitted"  # the skill's permissions do not cover it
    UNAVAILABLE = "unavailable"  # no tool provider handles this capability yet


@dataclass(frozen=True, slots=True)
class ActionOutcome:
    """What came of one governed action. `text` is written for the owner."""

    status: ActionStatus
    text: str
    tier: str = ""
    exit_code: int | None = None
    rule: str = ""
    alternatives: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the action ran and succeeded."""
        return self.status is ActionStatus.DONE and self.exit_code in (0, None)


class SkillFailed(Exception):
    """Raise from a skill to fail with a message the owner may read."""


class SkillContext(Protocol):
    """What a running skill may touch. Everything privileged goes through `run`."""

    @property
    def skill_name(self) -> str:
        """The running skill's name."""
        ...

    def read_input(self, name: str | None = None) -> Any:
        """One validated input by name, or all of them as a dict when `name` is None."""
        ...

    def write_output(self, name: str, value: Any) -> None:
        """Set one output (checked against the manifest's outputs)."""
        ...

    def read_config(self, name: str, default: Any = None) -> Any:
        """A configuration value: the owner's override, else the manifest's default."""
        ...

    async def run(self, action: ToolAction) -> ActionOutcome:
        """Ask governance to run one exact action; never raises for a refusal."""
        ...
