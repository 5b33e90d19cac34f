"""One agent request in flight: its receipts, its budget of model turns, its tool runs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from core.agent.progress import Progress
from core.agent.trail import Trail
from core.governance.flow import RequestFlow
from core.llm.types import (
    Completion,
    CompletionRequest,
    ContextNote,
    Image,
    Lane,
    ModelRouter,
    Role,
)
from core.runtime.stopping import stoppable


@dataclass(frozen=True, slots=True)
class AgentLimits:
    """Hard bounds: model turns in tool loops per request, and verifier attempts per step;
    and whether the local model may write free-text answers when no flagship is configured
    (only for a model the owner chose: the default 270M base model is for labels)."""

    max_iterations: int = 12
    step_attempts: int = 3
    verifier_temperature: float = 0.1
    local_answers: bool = False


@dataclass
class Quest:
    """Per-request state shared by the loop, the planner and the honesty gate."""

    router: ModelRouter
    trail: Trail
    channel: str
    typing: Callable[[], Awaitable[None]]
    limits: AgentLimits
    deep: bool = False
    iterations: int = 0
    stopped: bool = False  # a tool loop hit the iteration limit
    run_receipts: list[str] = field(default_factory=list)
    tools_used: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # tool calls that failed before a run
    images: tuple[Image, ...] = ()  # the owner's pictures of this turn, shown to the model
    system: str = ""  # the system prompt: the agent's rules, then what memory compiled
    context: ContextNote | None = None  # which memory items `system` holds, for receipts
    lessons: str = ""  # how similar past tasks went (memory's experiences), for the deep pass
    plan: tuple[str, ...] = ()  # the plan's steps, once there is one (for its experience)
    # Hears the id of an approval this request waits on (kept so a restart can resume it).
    asked: Callable[[str], Awaitable[None]] | None = None
    progress: Progress | None = None  # the message that shows it running, with Stop
    # What the request has read so far, and from where (core/governance/flow.py). Work no
    # owner's message started has no owner's words: nothing it changes is named by them.
    flow: RequestFlow = field(default_factory=lambda: RequestFlow(""))
    # The inbound update this request answers (core/governance/commands.py, asking): each
    # governed step is keyed by it and its place, so a request redone after a crash finds
    # the approvals it asked for the first time instead of asking again. None: no inbox.
    update: str | None = None
    steps: int = 0  # governed steps taken so far
    found: set[str] = field(default_factory=set)  # tools find_tools found, offered from now on

    def step_key(self) -> str | None:
        """The key of the next governed step (None without an update to key it by)."""
        self.steps += 1
        return None if self.update is None else f"{self.update}:step:{self.steps}"

    @property
    def exhausted(self) -> bool:
        """The iteration limit is reached: no further model turn in a tool loop."""
        return self.iterations >= self.limits.max_iterations

    async def complete(
        self, request: CompletionRequest, task_type: str, lane: Lane = Lane.FLAGSHIP_FAST
    ) -> Completion:
        """One model call for this quest, under the request's receipt; a call whose prompt
        holds what memory compiled says so on its router receipt (the items' ids)."""
        await self.typing()
        if self.context is not None and request.context is None and self._holds_memory(request):
            request = replace(request, context=self.context)
        call = self.router.complete(
            request,
            task_type=task_type,
            lane=lane,
            parent_id=self.trail.root,
            quest_id=self.trail.quest_id,
        )
        return await stoppable(call)  # the owner's Stop cuts a slow answer short

    def _holds_memory(self, request: CompletionRequest) -> bool:
        return any(m.role is Role.SYSTEM and self.system in m.content for m in request.messages)
