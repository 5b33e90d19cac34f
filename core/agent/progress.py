"""The progress message of a running task: one card, edited as steps and tools start and
finish, with a Stop button.

Edits are throttled to what messaging platforms allow: at least `interval` seconds between
two edits of the message (counted from when the previous edit was done, so the platform
never sees two closer together), the latest state wins when several changes come in
between, and the final state is always shown. Each tool call the task makes grants one edit,
plus `spare` (a 20-step task shows at most 25 edits), so a long task cannot flood the chat.
A task that ends before `after` seconds shows no progress message at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, replace
from enum import StrEnum

from core.bus import Bus
from core.errors import DeliveryDeferred, LancelotError
from core.events import Button, Card, CardKind
from core.runtime.tasks import Supervisor
from core.security.tokens import ActionTokens

log = logging.getLogger(__name__)

STOP = "agent.stop"  # the Stop button's action
STOP_TTL = 7 * 86400.0  # the button works as long as the task runs (it is withdrawn after)
SHOWN_ARGUMENT = ("command", "path", "url", "query")
MAX_SHOWN = 60


@dataclass(frozen=True, slots=True)
class ProgressTuning:
    """When the message appears, how often it may change, and its budget of edits."""

    after: float = 2.0  # seconds a task runs before it shows progress
    interval: float = 1.0  # seconds between two edits, at least (Telegram: ~1 per second)
    spare: int = 5  # edits beyond one per tool call


class Phase(StrEnum):
    """What the task is doing now."""

    THINKING = "thinking"
    RUNNING = "running"
    WAITING = "waiting"  # for the owner's approval
    STOPPING = "stopping"  # Stop was tapped; an effect under way finishes first
    DONE = "done"
    STOPPED = "stopped"
    FAILED = "failed"


FINAL = (Phase.DONE, Phase.STOPPED, Phase.FAILED)


@dataclass(frozen=True, slots=True)
class ProgressState:
    """What the message says: the plan step, the tool calls, what is happening now."""

    phase: Phase = Phase.THINKING
    step: int = 0  # the plan step under way (0: no plan)
    steps: int = 0
    step_text: str = ""
    steps_done: int = 0
    tools: int = 0  # tool calls started so far
    tool: str = ""  # the tool running now, as shown


def tool_label(name: str, arguments: object) -> str:
    """A tool call as the owner reads it: its name and its main argument, short."""
    if isinstance(arguments, dict):
        for key in SHOWN_ARGUMENT:
            value = arguments.get(key)
            if isinstance(value, str) and value:
                shown = value if len(value) <= MAX_SHOWN else value[: MAX_SHOWN - 1] + "…"
                return f"{name} ({shown})"
    return name


def render(state: ProgressState, stop_token: str | None, card_id: str) -> Card:
    """The progress card for a state (with Stop while the task can still be stopped)."""
    titles = {
        Phase.DONE: "Finished",
        Phase.STOPPED: "Stopped",
        Phase.FAILED: "Ended",
        Phase.STOPPING: "Stopping…",
    }
    lines = []
    if state.steps:
        if state.phase in FINAL:
            lines.append(f"Steps done: {state.steps_done} of {state.steps}")
        else:
            lines.append(f"Step {state.step} of {state.steps}: {state.step_text}")
    lines.append(f"Tool calls: {state.tools}")
    now = {
        Phase.THINKING: "thinking",
        Phase.RUNNING: f"running {state.tool}",
        Phase.WAITING: "waiting for your approval",
        Phase.STOPPING: f"finishing {state.tool} first" if state.tool else "stopping",
    }.get(state.phase)
    if now:
        lines.append(f"Now: {now}")
    live = state.phase not in (*FINAL, Phase.STOPPING) and stop_token is not None
    buttons = (Button("Stop", stop_token or ""),) if live else ()
    title = titles.get(state.phase, "Working on it")
    body = "\n".join(lines)
    return Card(CardKind.PROGRESS, title, body, buttons=buttons, correlation_id=card_id)


class Progress:
    """One task's progress message; every method returns at once (a pump does the I/O)."""

    def __init__(
        self,
        bus: Bus,
        tokens: ActionTokens | None,
        channel: str,
        chat_id: str,
        quest_id: str,
        tuning: ProgressTuning,
        tasks: Supervisor,
    ) -> None:
        self._bus, self._tokens, self._tuning = bus, tokens, tuning
        self._channel, self._chat_id, self._quest_id = channel, chat_id, quest_id
        self._state = ProgressState()
        self._changed = asyncio.Event()
        self._ended = asyncio.Event()
        self.card_id = Card(CardKind.PROGRESS, "").correlation_id
        self.edits = 0
        self._token: str | None = None
        self._pump = tasks.spawn(self._run(), name="agent-progress", report=False)

    @property
    def state(self) -> ProgressState:
        """The latest state (perhaps not shown yet)."""
        return self._state

    def update(self, **changes: object) -> None:
        """Change what the message says; the pump shows the latest state when it may."""
        if self._state.phase in FINAL:
            return
        self._state = replace(self._state, **changes)  # type: ignore[arg-type]
        self._changed.set()

    def step(self, number: int, of: int, text: str) -> None:
        """A plan step starts."""
        self.update(step=number, steps=of, step_text=text[:200], phase=self._now(Phase.THINKING))

    def step_done(self, number: int) -> None:
        """A plan step passed its check."""
        self.update(steps_done=number)

    def tool(self, label: str) -> None:
        """A tool call starts (each grants one edit)."""
        self.update(tools=self._state.tools + 1, tool=label, phase=self._now(Phase.RUNNING))

    def tool_done(self) -> None:
        """The tool call ended; the model thinks again."""
        self.update(tool="", phase=self._now(Phase.THINKING))

    def waiting(self) -> None:
        """An approval card went out; the task waits for the owner."""
        self.update(phase=self._now(Phase.WAITING))

    def stopping(self) -> None:
        """Stop was tapped; the task ends at its next safe point."""
        self.update(phase=Phase.STOPPING)

    def _now(self, phase: Phase) -> Phase:
        return Phase.STOPPING if self._state.phase is Phase.STOPPING else phase

    def end(self, phase: Phase) -> None:
        """The task is over; its final state is always shown (if the message is)."""
        self.update(phase=phase, tool="")
        self._ended.set()

    async def aclose(self) -> None:
        """Wait until the final state is shown (for tests and an orderly shutdown)."""
        await asyncio.wait((self._pump,))

    async def _run(self) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._tuning.after):
                await self._ended.wait()
        if self._ended.is_set() or not await self._show():
            return
        loop = asyncio.get_running_loop()
        last = loop.time()
        shown = self._state
        while shown.phase not in FINAL:
            await self._changed.wait()
            await asyncio.sleep(last + self._tuning.interval - loop.time())
            self._changed.clear()
            state = self._state
            if state.phase in FINAL or (state != shown and self._may_edit(state)):
                if state != shown:
                    await self._edit(state)
                shown, last = state, loop.time()
        if self._tokens is not None:  # a Stop tapped from now on is refused as stale
            await self._tokens.withdraw(self.card_id)

    def _may_edit(self, state: ProgressState) -> bool:
        """One edit per tool call, plus the spare; one always kept for the final state."""
        return self.edits + 1 < state.tools + self._tuning.spare

    async def _show(self) -> bool:
        if self._tokens is not None:
            self._token = await self._tokens.issue(
                STOP, {"quest_id": self._quest_id}, self.card_id, STOP_TTL
            )
        try:
            await self._bus.send(self._channel, self._chat_id, self._card(self._state))
        except DeliveryDeferred:
            return True  # queued: it arrives, and edits follow it
        except LancelotError as exc:
            log.info("no progress message for %s: %s", self._quest_id, exc)
            return False
        return True

    async def _edit(self, state: ProgressState) -> None:
        self.edits += 1
        try:
            await self._bus.update(self.card_id, self._card(state))
        except LancelotError as exc:
            log.info("progress edit for %s: %s", self._quest_id, exc)

    def _card(self, state: ProgressState) -> Card:
        return render(state, self._token, self.card_id)
