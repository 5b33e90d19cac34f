"""The log file keeps what matters: not a line per HTTP request of the SDKs."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from bot.logs import configure_logging
from core.receipts.redaction import Redactor
from tests.fakes.llm import FakeOpenAI


@pytest.fixture
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in ("httpx", "httpx2")}
    yield
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, was in levels.items():
        logging.getLogger(name).setLevel(was)


async def test_a_model_call_writes_no_request_line_to_the_log(
    tmp_path: Path, restored_logging: None
) -> None:
    configure_logging(tmp_path, "INFO", Redactor(), quiet=True)
    async with FakeOpenAI() as model:
        client = openai.AsyncOpenAI(api_key="sk-test-not-real", base_url=model.base_url)
        answer = await client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}]
        )
        await client.close()
    assert answer.choices
    logging.getLogger("lancelot.test").info("after the call")
    for handler in logging.getLogger().handlers:
        handler.flush()
    written = (tmp_path / "logs" / "lancelot.log").read_text()
    assert "after the call" in written  # the file is written: INFO lines do reach it
    assert "HTTP Request" not in written
    assert "chat/completions" not in written
