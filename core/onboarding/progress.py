"""Where the owner stands in onboarding: the steps, the answers so far, and the moves."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum


class Status(StrEnum):
    """Onboarding as a whole."""

    NOT_STARTED = "NOT_STARTED"  # never begun: set up by hand, or no first conversation yet
    IN_PROGRESS = "IN_PROGRESS"
    DONE = "DONE"
    SKIPPED = "SKIPPED"


class Step(StrEnum):
    """The questions, in the order they are asked."""

    NAME = "name"
    PROVIDER = "provider"
    TIMEZONE = "timezone"
    CHANNELS = "channels"


STEPS = tuple(Step)
TITLES = {
    Step.NAME: "your name",
    Step.PROVIDER: "the model provider",
    Step.TIMEZONE: "your timezone",
    Step.CHANNELS: "the channels",
}


@dataclass(frozen=True, slots=True)
class Progress:
    """The persisted state: status, the current step, and the owner's answers (None: not
    given, the settings' default applies). `provider` "" means "no model for now"."""

    status: Status = Status.NOT_STARTED
    step: Step = Step.NAME
    name: str | None = None
    provider: str | None = None
    timezone: str | None = None

    @property
    def settled(self) -> bool:
        """Whether scheduled work may run: onboarding is not under way."""
        return self.status is not Status.IN_PROGRESS

    @property
    def number(self) -> int:
        """The current step, counted from 1."""
        return STEPS.index(self.step) + 1

    def label(self) -> str:
        """The state in one token, as /health and the scheduler's gate show it."""
        if self.status is Status.IN_PROGRESS:
            return f"IN_PROGRESS: step {self.number} of {len(STEPS)} ({TITLES[self.step]})"
        return self.status.value

    def begin(self) -> Progress:
        """Start at the first step; answers given before stay as the defaults shown."""
        return replace(self, status=Status.IN_PROGRESS, step=STEPS[0])

    def answer(self, **values: str) -> Progress:
        """Keep this step's answer and move to the next step (or finish after the last)."""
        moved = replace(self, **values)  # type: ignore[arg-type]
        index = STEPS.index(self.step)
        if index + 1 == len(STEPS):
            return replace(moved, status=Status.DONE)
        return replace(moved, step=STEPS[index + 1])

    def back(self) -> Progress:
        """The step before (the first stays the first)."""
        return replace(self, step=STEPS[max(0, STEPS.index(self.step) - 1)])

    def restart_step(self) -> Progress:
        """Forget the current step's answer, to ask it again."""
        if self.step is Step.CHANNELS:
            return self
        return replace(self, **{self.step.value: None})  # type: ignore[arg-type]

    def reset(self) -> Progress:
        """Everything forgotten, from the first step."""
        return Progress(status=Status.IN_PROGRESS)

    def skip(self) -> Progress:
        """Stop asking: what was answered stays, the rest keeps the settings' defaults."""
        return replace(self, status=Status.SKIPPED)
