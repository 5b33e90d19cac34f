"""Gemini through google-genai: generateContent, functionCall parts, JSON-schema responses."""

from __future__ import annotations

import secrets
from typing import Any

import httpx
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from core.errors import PermanentError
from core.llm.flagship import FlagshipConfig, parse_arguments
from core.llm.retry import Unreachable, call_with_retries, error_for_status
from core.llm.types import Completion, CompletionRequest, Message, Role, ToolCall, Usage


def make_client(config: FlagshipConfig) -> tuple[httpx.AsyncClient, genai.Client]:
    """A genai client on our own httpx client (returned too: the caller closes it). The SDK's
    aiohttp session would add its own reconnect loop; retries live in core.llm.retry."""
    http = httpx.AsyncClient(timeout=config.timeout)
    options = types.HttpOptions(
        base_url=config.base_url,
        timeout=int(config.timeout * 1000),
        retry_options=types.HttpRetryOptions(attempts=1),
        httpx_async_client=http,
    )
    return http, genai.Client(api_key=config.api_key, http_options=options)


class GeminiProvider:
    """generateContent with native function declarations and response_json_schema."""

    def __init__(self, config: FlagshipConfig) -> None:
        self.name = config.name
        self._config = config
        self._http, self._client = make_client(config)

    async def complete(self, request: CompletionRequest) -> Completion:
        """Answer one request (ProviderUnavailable after retries, never an SDK error)."""
        model = request.model or self._config.fast_model
        contents = _contents(request.messages)
        config = _config(request)

        async def call() -> Completion:
            response = await self._client.aio.models.generate_content(
                model=model, contents=contents, config=config
            )
            return _completion(response, self.name, model)

        return await call_with_retries(self.name, self._config.retry, call, translate_error)

    async def aclose(self) -> None:
        """Close the HTTP sessions."""
        await self._client.aio.aclose()
        await self._http.aclose()
        self._client.close()


def _config(request: CompletionRequest) -> types.GenerateContentConfig:
    system = "\n\n".join(m.content for m in request.messages if m.role is Role.SYSTEM)
    config = types.GenerateContentConfig(
        system_instruction=system or None,
        temperature=request.temperature,
        max_output_tokens=request.max_tokens,
    )
    if request.tools:
        config.tools = [
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(
                        name=t.name, description=t.description, parameters_json_schema=t.parameters
                    )
                    for t in request.tools
                ]
            )
        ]
    if request.json_schema is not None:
        config.response_mime_type = "application/json"
        config.response_json_schema = request.json_schema
    return config


def _contents(messages: tuple[Message, ...]) -> list[types.Content]:
    """Gemini's turns: "model" for the assistant; tool results are functionResponse parts."""
    out: list[types.Content] = []
    for m in messages:
        if m.role is Role.SYSTEM:
            continue
        if m.role is Role.TOOL:
            part = types.Part(
                function_response=types.FunctionResponse(
                    id=m.tool_call_id, name=m.name or "tool", response={"result": m.content}
                )
            )
            last = out[-1] if out else None
            if last is not None and last.role == "user" and _only_responses(last):
                assert last.parts is not None
                last.parts.append(part)
            else:
                out.append(types.Content(role="user", parts=[part]))
            continue
        parts = [types.Part.from_bytes(data=i.data, mime_type=i.mime) for i in m.images]
        parts += [types.Part(text=m.content)] if m.content else []
        parts += [
            types.Part(function_call=types.FunctionCall(id=c.id, name=c.name, args=c.arguments))
            for c in m.tool_calls
        ]
        role = "model" if m.role is Role.ASSISTANT else "user"
        out.append(types.Content(role=role, parts=parts or [types.Part(text="")]))
    return out


def _only_responses(content: types.Content) -> bool:
    return all(p.function_response is not None for p in content.parts or ())


def _completion(response: Any, provider: str, model: str) -> Completion:
    candidates = response.candidates or []
    parts = (candidates[0].content.parts or []) if candidates and candidates[0].content else []
    text = "".join(p.text for p in parts if p.text and not p.thought)
    calls = tuple(
        ToolCall(
            id=p.function_call.id or f"call_{secrets.token_hex(6)}",
            name=p.function_call.name or "",
            arguments=parse_arguments(p.function_call.args),
        )
        for p in parts
        if p.function_call is not None
    )
    meta = response.usage_metadata
    usage = (
        Usage(meta.prompt_token_count or 0, meta.candidates_token_count or 0) if meta else Usage()
    )
    reason = candidates[0].finish_reason if candidates else None
    return Completion(
        text=text,
        tool_calls=calls,
        usage=usage,
        model=response.model_version or model,
        provider=provider,
        finish_reason=str(getattr(reason, "value", reason or "")),
    )


def translate_error(exc: Exception) -> Exception:
    """An SDK (or transport) exception in the error tree's words."""
    if isinstance(exc, genai_errors.APIError):
        return error_for_status("gemini", exc.code or 500)
    if isinstance(exc, httpx.TransportError | ConnectionError):
        return Unreachable.from_error("gemini", exc)
    return PermanentError(f"gemini: {type(exc).__name__}: {exc}")
