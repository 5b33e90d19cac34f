"""OpenAI (and compatible servers) through its SDK: chat completions, tools, JSON schema."""

from __future__ import annotations

import json
from typing import Any

import openai
from pydantic import BaseModel, ValidationError

from core.errors import PermanentError
from core.llm.flagship import FlagshipConfig, parse_arguments
from core.llm.retry import Unreachable, call_with_retries, error_for_status, retry_after_seconds
from core.llm.types import Completion, CompletionRequest, Message, Role, ToolCall, Usage


def make_client(config: FlagshipConfig) -> openai.AsyncOpenAI:
    """The openai SDK client for `config`; retries live in core.llm.retry, so its own are off.

    Its HTTP goes through aiohttp, the SDK's documented alternative transport: a call cost
    about a quarter less CPU than through its default one (benchmarks/telegram.py)."""
    return openai.AsyncOpenAI(
        api_key=config.api_key,
        base_url=config.base_url,
        timeout=config.timeout,
        max_retries=0,
        http_client=openai.DefaultAioHttpClient(),
    )


class OpenAIProvider:
    """Chat Completions with native tool calls and `response_format` json_schema."""

    def __init__(self, config: FlagshipConfig) -> None:
        self.name = config.name
        self._config = config
        self._client = make_client(config)

    async def complete(self, request: CompletionRequest) -> Completion:
        """Answer one request (ProviderUnavailable after retries, never an SDK error)."""
        model = request.model or self._config.fast_model
        kwargs = _request_kwargs(request, model)
        if self._config.base_url is None:
            # OpenAI's own API names the limit max_completion_tokens (newer models refuse
            # max_tokens); compatible servers know max_tokens.
            kwargs["max_completion_tokens"] = kwargs.pop("max_tokens")

        async def call() -> Completion:
            # The body is plain JSON already: posted through the SDK's documented low-level
            # call (same auth and errors), it skips `create`'s walk of every tool schema
            # against its TypedDicts, which took half a plain message's CPU in a burst. The
            # answer comes back as JSON (cast_to=object) and is read by _Answer below.
            answer = await self._client.post("/chat/completions", body=kwargs, cast_to=object)
            return _completion(answer, self.name)

        return await call_with_retries(self.name, self._config.retry, call, translate_error)

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.close()


def _request_kwargs(request: CompletionRequest, model: str) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": [_message(m) for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
    }
    if request.tools:
        kwargs["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in request.tools
        ]
    if request.json_schema is not None:
        kwargs["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": request.json_schema},
        }
    return kwargs


def _message(message: Message) -> dict[str, Any]:
    if message.role is Role.TOOL:
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    out: dict[str, Any] = {"role": message.role.value, "content": _content(message)}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in message.tool_calls
        ]
    return out


def _content(message: Message) -> str | list[dict[str, Any]]:
    """The text, or with images the text part and one image_url part (a data URL) each."""
    if not message.images:
        return message.content
    return [
        {"type": "text", "text": message.content},
        *(
            {"type": "image_url", "image_url": {"url": f"data:{i.mime};base64,{i.base64()}"}}
            for i in message.images
        ),
    ]


class _Function(BaseModel):
    name: str | None = None
    arguments: str | dict[str, Any] | None = None


class _ToolCall(BaseModel):
    id: str | None = None
    function: _Function | None = None


class _Said(BaseModel):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(BaseModel):
    message: _Said
    finish_reason: str | None = None


class _Usage(BaseModel):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _Answer(BaseModel):
    """What Lancelot reads of a chat completion; other fields are ignored, and any field
    Lancelot reads may be missing or null (compatible servers leave some out).

    Validated by pydantic's core, about 2 us, where the SDK's own ChatCompletion is built
    field by field in Python, about 70 us an answer."""

    choices: list[_Choice]
    usage: _Usage | None = None
    model: str | None = None


def _completion(data: object, provider: str) -> Completion:
    try:
        answer = _Answer.model_validate(data)
    except ValidationError as exc:
        raise PermanentError(
            f"{provider}: an answer that is not a chat completion ({exc.error_count()} errors,"
            f" first at {'.'.join(map(str, exc.errors()[0]['loc'])) or 'the top'})"
        ) from exc
    if not answer.choices:
        raise PermanentError(f"{provider}: an answer without choices")
    choice = answer.choices[0]
    calls = tuple(
        ToolCall(
            id=c.id or "",
            name=c.function.name or "",
            arguments=parse_arguments(c.function.arguments),
        )
        for c in (choice.message.tool_calls or ())
        if c.function is not None
    )
    usage = answer.usage
    return Completion(
        text=choice.message.content or "",
        tool_calls=calls,
        usage=Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0) if usage else Usage(),
        model=answer.model or "",
        provider=provider,
        finish_reason=choice.finish_reason or "",
    )


def translate_error(exc: Exception) -> Exception:
    """An SDK exception in the error tree's words."""
    if isinstance(exc, openai.APIStatusError):
        return error_for_status(
            "openai", exc.status_code, retry_after_seconds(exc.response.headers)
        )
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return Unreachable.from_error("openai", exc)
    if isinstance(exc, openai.APIError | PermanentError):
        return PermanentError(f"openai: {exc}")
    return PermanentError(f"openai: unexpected {type(exc).__name__}: {exc}")
