"""An idle `lancelot run` (Telegram and one model provider configured, no traffic) holds only
what serving needs; the rest loads on first use (docs/operations.md, "Memory and start").

The module list comes from Python's own import log (PYTHONPROFILEIMPORTTIME: one line on
stderr per module imported), so nothing in Lancelot has to report on itself.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from tests.fakes.lancelot_process import lancelot_run, run_env, stop
from tests.fakes.llm import FakeOpenAI
from tests.fakes.telegram import FakeTelegram

OWNER = 4242
SETTLE_SECONDS = 3.0  # after the first getUpdates: the background start-up work runs out
# Top-level packages an idle process must not hold, and the first use that loads each.
NOT_AT_START = {
    "openai": "the first model call",
    "anthropic": "the first model call with anthropic",
    "google": "the first Gemini call, Google Chat (not configured here)",
    "llama_cpp": "the first call on the local model",
    "mcp": "the first MCP server connected",
    "selectolax": "the first web page read",
    "jinja2": "the first page of the viewer shown",
    "docker": "the first sandbox command, and never with no engine there",
    "requests": "the docker SDK's transport",
    "rich": "httpx's command-line client, which no Lancelot process runs",
    "pygments": "httpx's command-line client",
    "click": "httpx's command-line client",
}


def imported(line: str) -> str | None:
    """The module named by one line of Python's import log (None for any other line)."""
    head, _, rest = line.partition("import time:")
    if head or rest.count("|") != 2:
        return None
    name = rest.rsplit("|", 1)[1].strip()
    return None if name == "imported package" else name


async def idle_modules(tg: FakeTelegram, env: dict[str, str]) -> set[str]:
    """Every module `lancelot run` imported up to SETTLE_SECONDS after its first getUpdates."""
    proc = await lancelot_run(
        {**env, "PYTHONPROFILEIMPORTTIME": "1"}, stderr=asyncio.subprocess.PIPE
    )
    assert proc.stderr is not None
    seen: set[str] = set()

    async def read_log() -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            if name := imported(line.decode(errors="replace")):
                seen.add(name)

    reader = asyncio.create_task(read_log())
    try:
        await tg.wait_for(lambda: tg.is_polling, timeout=90)
        await asyncio.sleep(SETTLE_SECONDS)
        idle = set(seen)
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(reader, 30)
    finally:
        reader.cancel()
        await stop(proc)
    return idle


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["none", "cold"])
async def test_an_idle_lancelot_run_loads_nothing_it_does_not_use(
    tmp_path: Path, engine: str
) -> None:
    # none: the pool warms, and finds no engine; cold: an engine answers, the pool waits for
    # the first command, and a home no dry run has used has nothing to sweep at the start.
    where = (
        {"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
        if engine == "none"
        else {"LANCELOT_SANDBOX_WARM_AT_START": "false"}
    )
    async with FakeTelegram() as tg, FakeOpenAI() as model:
        env = run_env(
            tmp_path / "home",
            tg,
            owner=OWNER,
            LANCELOT_PROVIDER="openai",
            OPENAI_API_KEY="sk-test-not-real",
            OPENAI_BASE_URL=model.base_url,
            **where,
        )
        modules = await idle_modules(tg, env)

    assert {"bot.runner", "telegram.ext", "core.llm.providers"} <= modules  # the log was read
    loaded = {m.partition(".")[0] for m in modules} & set(NOT_AT_START)
    assert {name: NOT_AT_START[name] for name in sorted(loaded)} == {}
