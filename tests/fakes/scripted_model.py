"""A scripted in-process model behind the ModelRouter protocol, for agent conversations.

Each flagship call takes the next step of the script: a Completion, an exception to raise
(ProviderUnavailable: an outage), or a function of the request (a model that reacts to what
its tools told it). The local lanes answer through `local`, or are unavailable.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from core.errors import ProviderUnavailable
from core.llm.types import Completion, CompletionRequest, Lane, Message, Role, ToolCall

Step = Completion | Exception | Callable[[CompletionRequest], Completion]
LOCAL_LANES = (Lane.LOCAL_UTILITY, Lane.LOCAL_REDACTION)
_ids = itertools.count(1)


@dataclass(frozen=True)
class Call:
    """One call the router received."""

    task_type: str
    lane: Lane
    request: CompletionRequest
    quest_id: str | None


class ScriptedRouter:
    """Implements core.llm.types.ModelRouter (plus has_local) from a script."""

    def __init__(
        self,
        script: Iterable[Step] = (),
        *,
        flagship: bool = True,
        local: Callable[[CompletionRequest], Completion] | None = None,
        latency: float = 0.0,
    ) -> None:
        """`latency`: seconds each flagship answer takes (a model that thinks)."""
        self._script: deque[Step] = deque(script)
        self._latency = latency
        self._flagship = flagship
        self._local = local
        self.calls: list[Call] = []

    def has_flagship(self) -> bool:
        return self._flagship

    def has_local(self) -> bool:
        return self._local is not None

    def left(self) -> int:
        """Script steps not used yet."""
        return len(self._script)

    async def complete(
        self,
        request: CompletionRequest,
        *,
        task_type: str,
        lane: Lane = Lane.FLAGSHIP_FAST,
        parent_id: str | None = None,
        quest_id: str | None = None,
    ) -> Completion:
        self.calls.append(Call(task_type, lane, request, quest_id))
        if lane in LOCAL_LANES:
            if self._local is None:
                raise ProviderUnavailable("no local model")
            return self._local(request)
        if not self._flagship:
            raise ProviderUnavailable("no flagship")
        if not self._script:
            raise AssertionError(f"the script ran out at a {task_type} call")
        step = self._script.popleft()
        if self._latency:
            await asyncio.sleep(self._latency)
        if isinstance(step, Exception):
            raise step
        if callable(step):
            return step(request)
        return step


def text(content: str) -> Completion:
    """A plain answer."""
    return Completion(content, provider="scripted", model="scripted-1")


def call(name: str, **arguments: Any) -> Completion:
    """A turn that calls one tool."""
    tool_call = ToolCall(f"call_{next(_ids)}", name, arguments)
    return Completion("", (tool_call,), provider="scripted", model="scripted-1")


def final(
    response: str, actions: Iterable[tuple[str, str]] = (), next_action: str = ""
) -> Completion:
    """The structured final answer."""
    body = {
        "response_to_user": response,
        "actions_taken": [{"tool": t, "detail": d} for t, d in actions],
        "next_action": next_action,
    }
    return text(json.dumps(body))


def tool_said(request: CompletionRequest) -> dict[str, Any]:
    """What the last TOOL message told the model (parsed JSON)."""
    last: Message = next(m for m in reversed(request.messages) if m.role is Role.TOOL)
    parsed: dict[str, Any] = json.loads(last.content)
    return parsed


class RouterRelay:
    """A ModelRouter that passes every call to `target`, so a test can give a running app's
    agent a new script without rewiring it (the app's registries are frozen)."""

    def __init__(self, target: Any = None) -> None:
        self.target: Any = target or ScriptedRouter(flagship=False)

    def has_flagship(self) -> bool:
        return bool(self.target.has_flagship())

    def has_local(self) -> bool:
        has_local = getattr(self.target, "has_local", None)
        return True if has_local is None else bool(has_local())

    def local_ready(self) -> bool:
        local_ready = getattr(self.target, "local_ready", None)
        return True if local_ready is None else bool(local_ready())

    def warm_local(self) -> None:
        warm_local = getattr(self.target, "warm_local", None)
        if warm_local is not None:
            warm_local()

    async def complete(
        self,
        request: CompletionRequest,
        *,
        task_type: str,
        lane: Lane = Lane.FLAGSHIP_FAST,
        parent_id: str | None = None,
        quest_id: str | None = None,
    ) -> Completion:
        completion: Completion = await self.target.complete(
            request, task_type=task_type, lane=lane, parent_id=parent_id, quest_id=quest_id
        )
        return completion
