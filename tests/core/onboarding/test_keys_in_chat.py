"""A key typed in chat is refused with the reason, and kept nowhere: not in the receipts,
memory, state.db or the log. It would sit in the chat history; keys come from the
environment or `lancelot setup`."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.app import Lancelot
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say

# Built here, not written whole: no secret-looking string sits in the sources.
KEY = "sk-proj-" + "Q7" * 20
LABELLED = "OPENAI_API_KEY=" + "k3Y" * 8


def _files_holding(home: Path, secret: str) -> list[str]:
    return [
        str(path.relative_to(home))
        for path in sorted(home.rglob("*"))
        if path.is_file() and secret.encode() in path.read_bytes()
    ]


async def test_a_key_is_refused_at_any_time_and_kept_nowhere(
    app: Lancelot, phone: MemoryChannel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    refused = await say(app, phone, f"here is my key {KEY} please use it")
    assert refused.title == "Not processed"
    assert "stays in the chat history" in refused.body
    assert "`lancelot setup`" in refused.body
    assert "OPENAI_API_KEY" in refused.body
    # The same in the middle of onboarding, and the step does not move.
    await say(app, phone, "/start")
    again = await say(app, phone, KEY)
    assert again.title == "Not processed"
    assert (await say(app, phone, "STATUS")).fields[0] == ("Step", "Step 1 of 4: your name")
    await app.drain()
    assert app.memory is not None
    assert KEY not in str(await app.memory.conversation("owner-chat"))
    assert _files_holding(app.home, KEY) == []
    assert KEY not in caplog.text


async def test_onboarding_refuses_a_labelled_key_the_gate_lets_through(
    app: Lancelot, phone: MemoryChannel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    await say(app, phone, "/start")
    await say(app, phone, "Ana")  # the provider step, where a pasted key is most likely
    refused = await say(app, phone, LABELLED)
    assert refused.title == "Not kept: that looks like a key"
    assert "`lancelot setup`" in refused.body
    lone = await say(app, phone, "Zx9" + "pL4" * 10)  # a bare key of no known shape
    assert lone.title == "Not kept: that looks like a key"
    status = await say(app, phone, "status")
    assert dict(status.fields)["Step"] == "Step 2 of 4: the model provider"
    await app.drain()
    secret = LABELLED.split("=", 1)[1]
    assert _files_holding(app.home, secret) == []
    assert secret not in caplog.text
