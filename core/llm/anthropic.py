"""Anthropic through its SDK: Messages, tool_use blocks, structured output by a forced tool."""

from __future__ import annotations

import json
from typing import Any

import anthropic

from core.errors import PermanentError
from core.llm.flagship import STRUCTURED_TOOL, FlagshipConfig, parse_arguments
from core.llm.retry import Unreachable, call_with_retries, error_for_status, retry_after_seconds
from core.llm.types import Completion, CompletionRequest, Message, Role, ToolCall, Usage


class AnthropicProvider:
    """Messages API with native tools; a json_schema becomes one tool the model must call."""

    def __init__(self, config: FlagshipConfig) -> None:
        self.name = config.name
        self._config = config
        # Retries live in core.llm.retry, so the SDK's own are off; its HTTP goes through
        # aiohttp, the SDK's documented alternative transport (as for openai).
        self._client = anthropic.AsyncAnthropic(
            api_key=config.api_key,
            base_url=config.base_url,
            timeout=config.timeout,
            max_retries=0,
            http_client=anthropic.DefaultAioHttpClient(),
        )

    async def complete(self, request: CompletionRequest) -> Completion:
        """Answer one request (ProviderUnavailable after retries, never an SDK error)."""
        model = request.model or self._config.fast_model
        kwargs = _request_kwargs(request, model)

        async def call() -> Completion:
            response = await self._client.messages.create(**kwargs)
            return _completion(response, self.name, structured=request.json_schema is not None)

        return await call_with_retries(self.name, self._config.retry, call, translate_error)

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.close()


def _request_kwargs(request: CompletionRequest, model: str) -> dict[str, Any]:
    system = "\n\n".join(m.content for m in request.messages if m.role is Role.SYSTEM)
    kwargs: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        # No temperature: this SDK generation no longer takes one (the model picks its own).
        "messages": _messages(request.messages),
    }
    if system:
        kwargs["system"] = system
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.parameters}
        for t in request.tools
    ]
    if request.json_schema is not None:
        # Structured output: the answer arrives as the input of a tool the model must call.
        tools = [
            {
                "name": STRUCTURED_TOOL,
                "description": "Give the final answer in this structure.",
                "input_schema": request.json_schema,
            }
        ]
        kwargs["tool_choice"] = {"type": "tool", "name": STRUCTURED_TOOL}
    if tools:
        kwargs["tools"] = tools
    return kwargs


def _messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Anthropic's turns: tool results are user content blocks; consecutive ones merge."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role is Role.SYSTEM:
            continue
        if m.role is Role.TOOL:
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
            continue
        if m.role is Role.ASSISTANT and m.tool_calls:
            blocks: list[dict[str, Any]] = (
                [{"type": "text", "text": m.content}] if m.content else []
            )
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                for c in m.tool_calls
            ]
            out.append({"role": "assistant", "content": blocks})
            continue
        out.append({"role": m.role.value, "content": _content(m)})
    return out


def _content(message: Message) -> str | list[dict[str, Any]]:
    """The text, or with images one base64 image block each and then the text (Anthropic
    reads images best before the question about them)."""
    if not message.images:
        return message.content
    source = [
        {"type": "base64", "media_type": image.mime, "data": image.base64()}
        for image in message.images
    ]
    blocks = [{"type": "image", "source": s} for s in source]
    return [*blocks, {"type": "text", "text": message.content or "(no caption)"}]


def _completion(response: Any, provider: str, *, structured: bool) -> Completion:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in response.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            if structured and block.name == STRUCTURED_TOOL:
                texts = [json.dumps(block.input)]
                continue
            calls.append(
                ToolCall(id=block.id, name=block.name, arguments=parse_arguments(block.input))
            )
    usage = response.usage
    return Completion(
        text="".join(texts),
        tool_calls=tuple(calls),
        usage=Usage(usage.input_tokens, usage.output_tokens) if usage else Usage(),
        model=response.model or "",
        provider=provider,
        finish_reason=response.stop_reason or "",
    )


def translate_error(exc: Exception) -> Exception:
    """An SDK exception in the error tree's words."""
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        return error_for_status("anthropic", status, retry_after_seconds(exc.response.headers))
    if isinstance(exc, anthropic.APIConnectionError):  # includes timeouts
        return Unreachable.from_error("anthropic", exc)
    return PermanentError(f"anthropic: {type(exc).__name__}: {exc}")
