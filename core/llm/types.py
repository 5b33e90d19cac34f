"""The one interface every model provider implements, and the values that cross it.

Providers (local llama-cpp, OpenAI, Anthropic, Gemini) translate these to and from their own
SDK's types; the router and the agent loop only ever see these.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol


class Role(StrEnum):
    """Who said a message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class Lane(StrEnum):
    """Where a model call is routed."""

    LOCAL_REDACTION = "local_redaction"
    LOCAL_UTILITY = "local_utility"
    FLAGSHIP_FAST = "flagship_fast"
    FLAGSHIP_DEEP = "flagship_deep"


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call: name, what it does, and a JSON Schema for its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The model asks for one tool run. `id` pairs it with the TOOL message that answers."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Image:
    """A picture the model is shown with a message: its bytes and media type (image/jpeg,
    image/png, image/webp or image/gif, as every provider takes them)."""

    mime: str
    data: bytes

    def base64(self) -> str:
        """The bytes as base64 text, as the JSON APIs carry them."""
        return base64.b64encode(self.data).decode("ascii")


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a conversation.

    An ASSISTANT message may carry tool_calls; a TOOL message answers the call named by
    tool_call_id (and names the tool in `name`); a USER message may carry `images`, which
    each provider sends in its SDK's image form.
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    images: tuple[Image, ...] = ()


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens a call used."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        """Input plus output."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class ContextNote:
    """Which memory items a request's prompt holds and their tokens (ids, never the texts);
    the router's receipt carries it as its `context_compiled` detail."""

    item_ids: tuple[str, ...]
    tokens: int


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """What a caller asks of a model.

    `json_schema`, when set, constrains the answer to JSON matching it (a grammar for the
    local model, structured output or a forced tool for the flagships).
    """

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    temperature: float = 0.2
    max_tokens: int = 1024
    json_schema: dict[str, Any] | None = None
    model: str | None = None  # None: the provider's default for the lane
    context: ContextNote | None = None  # what memory put in the prompt, for the receipt


@dataclass(frozen=True, slots=True)
class Completion:
    """What a model answered: text, tool calls, or both."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    provider: str = ""
    finish_reason: str = ""


class Provider(Protocol):
    """A model behind one SDK or binding.

    `complete` raises core.errors.ProviderUnavailable when the provider cannot answer
    (after its own retries on transient errors), never an SDK exception.
    """

    name: str  # "local", "openai", "anthropic", "gemini"

    async def complete(self, request: CompletionRequest) -> Completion:
        """Answer one request."""
        ...


class ModelRouter(Protocol):
    """What the agent loop asks of the model layer: one completion for a kind of task.

    The router picks a lane (escalating flagship_fast -> flagship_deep on risk, complexity or a
    failed fast call), records a RouterDecision receipt (action_type "router_decision",
    token_count, metadata lane/provider/model/cost_usd) linked by parent_id and quest_id, and
    raises core.errors.ProviderUnavailable when no provider can answer.
    """

    def has_flagship(self) -> bool:
        """Whether a flagship provider (OpenAI, Anthropic or Gemini) is configured."""
        ...

    async def complete(
        self,
        request: CompletionRequest,
        *,
        task_type: str,
        lane: Lane = Lane.FLAGSHIP_FAST,
        parent_id: str | None = None,
        quest_id: str | None = None,
    ) -> Completion:
        """Answer `request` on `lane` (or a lane it escalates to)."""
        ...
