"""Each flagship adapter, through its real SDK, against a fake server speaking that API's JSON."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from core.errors import PermanentError, ProviderUnavailable
from core.llm.providers import build_provider
from core.llm.retry import RetryPolicy
from core.llm.types import CompletionRequest, Message, Provider, Role, ToolCall, ToolSpec
from tests.fakes.llm import Reply
from tests.fakes.llm.wiring import FAKES, FAST, Wired, config_for

ASK = CompletionRequest(
    messages=(
        Message(Role.SYSTEM, "You are Lancelot."),
        Message(Role.USER, "What is the capital of France?"),
    )
)
LIST_FILES = ToolSpec(
    name="list_files",
    description="List the files in a workspace folder.",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
)


async def test_a_question_is_answered(wired: Wired) -> None:
    wired.fake.reply(Reply(text="Paris."))
    answer = await wired.provider.complete(ASK)
    assert answer.text == "Paris."
    assert answer.provider == wired.name
    assert answer.tool_calls == ()
    sent_in, sent_out = wired.fake.usage_sent[-1]
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (sent_in, sent_out)
    assert wired.fake.models_called() == [FAST]  # no model named: the fast one


async def test_the_system_prompt_and_question_reach_the_server(wired: Wired) -> None:
    await wired.provider.complete(ASK)
    wire = json.dumps(wired.fake.requests[-1].body)
    assert "You are Lancelot." in wire
    assert "capital of France" in wire


async def test_a_tool_call_is_parsed(wired: Wired) -> None:
    wired.fake.reply(Reply(tool_calls=(("list_files", {"path": "notes"}),)))
    request = CompletionRequest(
        messages=(Message(Role.USER, "What is in my notes folder?"),), tools=(LIST_FILES,)
    )
    answer = await wired.provider.complete(request)
    assert [(c.name, c.arguments) for c in answer.tool_calls] == [("list_files", {"path": "notes"})]
    assert answer.tool_calls[0].id
    # The tool was declared to the model in the API's own shape.
    assert "List the files in a workspace folder." in json.dumps(wired.fake.requests[-1].body)


async def test_a_tool_result_goes_back_paired_with_its_call(wired: Wired) -> None:
    call = ToolCall(id="call_1", name="list_files", arguments={"path": "notes"})
    request = CompletionRequest(
        messages=(
            Message(Role.USER, "What is in my notes folder?"),
            Message(Role.ASSISTANT, "", tool_calls=(call,)),
            Message(Role.TOOL, "a.txt\nb.txt", tool_call_id="call_1", name="list_files"),
        ),
        tools=(LIST_FILES,),
    )
    wired.fake.reply(Reply(text="Two files: a.txt and b.txt."))
    answer = await wired.provider.complete(request)
    assert answer.text == "Two files: a.txt and b.txt."
    wire = json.dumps(wired.fake.requests[-1].body)
    assert "call_1" in wire
    assert "a.txt\\nb.txt" in wire


async def test_structured_output_follows_the_schema(wired: Wired) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "confidence": {"type": "number"}},
        "required": ["city", "confidence"],
    }
    wired.fake.reply(Reply(json={"city": "Paris", "confidence": 0.9}))
    answer = await wired.provider.complete(
        CompletionRequest(messages=ASK.messages, json_schema=schema)
    )
    assert json.loads(answer.text) == {"city": "Paris", "confidence": 0.9}
    assert answer.tool_calls == ()  # a forced structured tool is not a tool call
    assert '"confidence"' in json.dumps(wired.fake.requests[-1].body)  # the schema was sent


async def test_a_429_is_retried_then_answered(wired: Wired) -> None:
    wired.fake.fail_next(429, retry_after=0)
    wired.fake.reply(Reply(text="Paris."))
    answer = await wired.provider.complete(ASK)
    assert answer.text == "Paris."
    assert len(wired.fake.requests) == 2


async def test_a_500_is_retried_then_answered(wired: Wired) -> None:
    wired.fake.fail_next(500, times=2)
    answer = await wired.provider.complete(ASK)
    assert answer.text == "fake answer"
    assert len(wired.fake.requests) == 3


async def test_an_outage_becomes_provider_unavailable_after_the_retries(wired: Wired) -> None:
    wired.fake.go_down()
    with pytest.raises(ProviderUnavailable) as caught:
        await wired.provider.complete(ASK)
    assert len(wired.fake.requests) == 3
    assert wired.name in caught.value.user_message
    assert "Traceback" not in caught.value.user_message
    assert "503" not in caught.value.user_message  # the owner sees no internals


async def test_a_bad_request_is_not_retried(wired: Wired) -> None:
    wired.fake.fail_next(400)
    with pytest.raises(ProviderUnavailable):
        await wired.provider.complete(ASK)
    assert len(wired.fake.requests) == 1


@pytest.mark.parametrize("name", sorted(FAKES))
async def test_a_server_that_is_gone_becomes_provider_unavailable(name: str) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with FAKES[name]() as fake:
        config = config_for(name, fake)
    # The fake has stopped: its port refuses connections, as does the unbound one.
    for url in (config.base_url, f"http://127.0.0.1:{port}"):
        dead = build_provider(type(config)(**{**_fields(config), "base_url": url}))
        try:
            with pytest.raises(ProviderUnavailable):
                await dead.complete(ASK)
        finally:
            await dead.aclose()  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(FAKES))
async def test_a_server_that_never_answers_times_out_as_unavailable(name: str) -> None:
    """A model server that takes the request and goes silent costs the timeout, not forever."""

    released = asyncio.Event()
    handled: list[asyncio.Task[object] | None] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handled.append(asyncio.current_task())
        await reader.read(65536)
        await released.wait()
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with FAKES[name]() as fake:
        config = config_for(name, fake)
    fields = {**_fields(config), "base_url": f"http://127.0.0.1:{port}", "timeout": 0.3}
    fields["retry"] = RetryPolicy(attempts=1, base_delay=0.01, max_delay=0.01, timeout=5)
    silent_provider = build_provider(type(config)(**fields))
    started = time.monotonic()
    try:
        with pytest.raises(ProviderUnavailable):
            await silent_provider.complete(ASK)
    finally:
        await silent_provider.aclose()  # type: ignore[attr-defined]
        released.set()
        server.close()
        await asyncio.gather(*(task for task in handled if task is not None))
    assert time.monotonic() - started < 3


@pytest.mark.parametrize(
    ("answer", "text", "calls", "tokens"),
    [
        # A compatible server's spare answer: no usage, no model, a tool call's arguments as
        # an object rather than JSON text, an unknown field.
        (
            {
                "choices": [
                    {
                        "message": {
                            "content": None,
                            "tool_calls": [
                                {"id": "c1", "function": {"name": "f", "arguments": {"a": 1}}}
                            ],
                        },
                        "extra": True,
                    }
                ]
            },
            "",
            [("f", {"a": 1})],
            (0, 0),
        ),
        (
            {
                "choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 2},
            },
            "hi",
            [],
            (7, 2),
        ),
        # Nulls where a field is usually given.
        (
            {
                "choices": [
                    {
                        "message": {
                            "content": "ok",
                            "tool_calls": [{"id": None, "function": {"name": "g"}}],
                        },
                        "finish_reason": None,
                    }
                ],
                "usage": {"prompt_tokens": None, "completion_tokens": 3},
                "model": None,
            },
            "ok",
            [("g", {})],
            (0, 3),
        ),
    ],
)
async def test_an_openai_compatible_answer_is_read_as_json(
    answer: dict[str, object], text: str, calls: list[object], tokens: tuple[int, int]
) -> None:
    async with _answering(answer) as provider:
        completion = await provider.complete(ASK)
    assert completion.text == text
    assert [(c.name, c.arguments) for c in completion.tool_calls] == calls
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == tokens


@pytest.mark.parametrize(
    "answer",
    [{"choices": "nope"}, {"choices": []}, {"choices": [{"message": 3}]}, [1, 2], {"id": "x"}],
)
async def test_an_answer_that_is_not_a_chat_completion_is_refused_once(answer: object) -> None:
    """A 200 whose JSON is not a completion is a clear error, not retried, never a crash."""
    async with _answering(answer) as provider:
        with pytest.raises(ProviderUnavailable) as caught:
            await provider.complete(ASK)
    assert "openai" in str(caught.value)
    assert isinstance(caught.value.__cause__, PermanentError)


@contextlib.asynccontextmanager
async def _answering(answer: object) -> AsyncIterator[Provider]:
    """An OpenAI provider against a server that answers every request with `answer`."""

    async def answering(_: web.Request) -> web.Response:
        return web.json_response(answer)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answering)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    async with FAKES["openai"]() as fake:
        config = config_for("openai", fake)
    provider = build_provider(
        type(config)(**{**_fields(config), "base_url": f"http://127.0.0.1:{port}/v1"})
    )
    try:
        yield provider
    finally:
        await provider.aclose()  # type: ignore[attr-defined]
        await runner.cleanup()


def _fields(config: object) -> dict[str, object]:
    return {name: getattr(config, name) for name in config.__dataclass_fields__}  # type: ignore[attr-defined]


async def test_a_refused_key_tells_the_owner_which_setting_to_check(wired: Wired) -> None:
    wired.fake.fail_next(401)
    with pytest.raises(ProviderUnavailable) as caught:
        await wired.provider.complete(ASK)
    assert f"{wired.name.upper()}_API_KEY" in caught.value.user_message
    assert "test-key-not-real" not in caught.value.user_message
    assert len(wired.fake.requests) == 1
