"""The owner's running tasks, and stopping them: the Stop button on a task's progress
message and /stop (every task running in that chat). Each stop leaves receipts: who asked,
through which channel and when (stop_requested), then where the task stopped (task_stopped)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from core.agent.answer import FinalAnswer
from core.agent.progress import Phase, Progress, ProgressTuning
from core.agent.quest import Quest
from core.bus import Bus
from core.commands.registry import CommandContext, PressContext
from core.errors import DeliveryFailed
from core.events import Card, CardKind
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.receipts.registry import TaskReceipt
from core.runtime.stopping import StopSwitch
from core.runtime.tasks import Supervisor
from core.security.tokens import ActionTokens

NOTHING_RUNNING = "Nothing is running in this chat, so there is nothing to stop."


@dataclass(eq=False)
class RunningTask:
    """One agent request in flight: its chat, its stop switch and its progress message."""

    quest: Quest
    chat: str  # "channel:chat_id"
    request: str
    switch: StopSwitch = field(default_factory=StopSwitch)
    progress: Progress | None = None
    halted: bool = False  # the stop took effect (rather than the task ending first)


class RunningTasks:
    """The tasks running now, by quest; the stop handlers of /stop and the Stop button."""

    def __init__(
        self,
        bus: Bus,
        ledger: ReceiptStore,
        tokens: ActionTokens | None,
        tasks: Supervisor,
        tuning: ProgressTuning | None = None,
    ) -> None:
        self._bus, self._ledger, self._tokens = bus, ledger, tokens
        self._supervisor = tasks
        self._tuning = tuning or ProgressTuning()
        self._running: dict[str, RunningTask] = {}

    def in_chat(self, chat: str) -> list[RunningTask]:
        """The tasks running in one chat ("channel:chat_id"), oldest first."""
        return [t for t in self._running.values() if t.chat == chat]

    @contextlib.asynccontextmanager
    async def track(
        self, quest: Quest, channel: str, chat_id: str, request: str
    ) -> AsyncIterator[RunningTask]:
        """Run a request as a task that shows progress and can be stopped (the caller
        catches Stopped); its progress message shows how it ended."""
        progress = Progress(
            self._bus,
            self._tokens,
            channel,
            chat_id,
            quest.trail.quest_id,
            self._tuning,
            self._supervisor,
        )
        task = RunningTask(quest, f"{channel}:{chat_id}", request, progress=progress)
        quest.progress = progress
        asked = quest.asked

        async def waiting(approval_id: str) -> None:
            progress.waiting()
            if asked is not None:
                await asked(approval_id)

        quest.asked = waiting
        self._running[quest.trail.quest_id] = task
        ended = Phase.DONE
        try:
            with task.switch.active():
                yield task
        except BaseException:  # a crash (the owner is told by the orchestrator) or shutdown
            ended = Phase.FAILED
            raise
        finally:
            self._running.pop(quest.trail.quest_id, None)
            progress.end(Phase.STOPPED if task.halted else ended)

    def ask_stop(self, task: RunningTask, by: str, via: str, parent_id: str) -> bool:
        """Ask one task to stop (False if it was asked already), with its receipt."""
        if not task.switch.ask(by, via):
            return False
        if task.progress is not None:
            task.progress.stopping()
        self._ledger.append(
            Receipt(
                action_type=TaskReceipt.STOP_REQUESTED,
                action_name=via,
                inputs={"request": task.request[:200]},
                outputs={"quest_id": task.quest.trail.quest_id},
                parent_id=parent_id,
                quest_id=task.quest.trail.quest_id,
                metadata={"by": by, "via": via, "at": time.time()},
            )
        )
        return True

    def stopped(self, task: RunningTask) -> FinalAnswer:
        """The task honoured its stop: record where, and say what was done before it."""
        quest = task.quest
        task.halted = True
        state = task.progress.state if task.progress is not None else None
        asked = task.switch.request
        took = (time.monotonic() - asked.monotonic) * 1000 if asked is not None else None
        where = ""
        if state is not None and state.steps:
            where = f" at step {state.step} of {state.steps}"
        done = []
        if state is not None and state.steps:
            done.append(f"{state.steps_done} of {state.steps} plan steps passed their check")
        runs = len(quest.run_receipts)
        done.append(f"{runs} tool run{'s' if runs != 1 else ''} finished")
        quest.trail.record(
            TaskReceipt.TASK_STOPPED,
            "stopped",
            outputs={
                "step": state.step if state else 0,
                "steps": state.steps if state else 0,
                "steps_done": state.steps_done if state else 0,
                "tool_runs": runs,
                "cut_short": state.tool if state else "",
            },
            status=ReceiptStatus.SKIPPED,
            metadata={
                "by": asked.by if asked else None,
                "via": asked.via if asked else None,
                "took_ms": round(took, 1) if took is not None else None,
            },
        )
        return FinalAnswer(
            response_to_user=(
                f"Stopped{where}, as you asked. Before the stop: {'; '.join(done)}. "
                "Nothing else was started after it; what ran is listed below."
            ),
            next_action="Send the request again if you want it finished.",
        )

    async def on_stop_command(self, ctx: CommandContext) -> Card:
        """/stop: stop every task running in this chat."""
        chat = f"{ctx.event.channel}:{ctx.event.chat_id}"
        running = self.in_chat(chat)
        if not running:
            return Card(CardKind.REPLY, "Nothing to stop", NOTHING_RUNNING)
        asked = [
            t
            for t in running
            if self.ask_stop(t, ctx.event.sender_id, ctx.event.channel, ctx.receipt_id)
        ]
        if not asked:
            return Card(CardKind.REPLY, "Already stopping", "The stop was asked for already.")
        listed = "\n".join(f"- {t.request[:80]}" for t in asked)
        return Card(
            CardKind.REPLY,
            f"Stopping {len(asked)} task{'s' if len(asked) != 1 else ''}",
            f"{listed}\n\nA change already being applied finishes first; then I say what "
            "was done before the stop.",
        )

    async def on_stop_press(self, ctx: PressContext) -> Card | None:
        """The Stop button of a progress message (its token was valid and is now spent)."""
        task = self._running.get(str(ctx.payload.get("quest_id")))
        if task is None:  # ended (or Lancelot restarted) since the message was shown
            gone = Card(CardKind.REPLY, "Nothing to stop", "That task is no longer running.")
            with contextlib.suppress(DeliveryFailed):
                await self._bus.send(ctx.event.channel, ctx.event.chat_id, gone)
            return None
        self.ask_stop(task, ctx.event.sender_id, ctx.event.channel, ctx.receipt_id)
        return None  # the progress message shows "Stopping…" itself, within its edit limits
