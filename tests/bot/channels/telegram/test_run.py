"""`lancelot run` with Telegram configured: the real process serves the owner and stops cleanly."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from tests.fakes.lancelot_process import lancelot_run as start
from tests.fakes.lancelot_process import run_env
from tests.fakes.telegram import FakeTelegram

from .harness import OWNER

PIPE = asyncio.subprocess.PIPE


async def lancelot_run(tg: FakeTelegram, home: Path, **extra: str) -> asyncio.subprocess.Process:
    """`lancelot run` for the owner, its console read by the test."""
    env = run_env(home, tg, owner=OWNER, **extra)
    return await start(env, stdout=PIPE, stderr=PIPE)


@pytest.mark.slow
async def test_lancelot_run_serves_the_owner_and_never_logs_the_token(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    proc = await lancelot_run(tg, home)
    try:
        await tg.wait_for(lambda: tg.is_polling, timeout=60)
        tg.user_message("/start")
        [greeting] = await tg.wait_for_sent(1, timeout=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(proc.communicate(), 30)

    assert greeting["plain_text"].startswith("Hello, I'm Lancelot")
    assert proc.returncode == 0
    log = (home / "logs" / "lancelot.log").read_text()
    assert "serving as @lancelot_test_bot" in log
    for output in (log, stderr.decode()):
        assert tg.token not in output
        assert tg.token.split(":")[1] not in output
        assert "Traceback" not in output


@pytest.mark.slow
async def test_a_rejected_token_stops_startup_with_one_line(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    proc = await lancelot_run(tg, tmp_path / "home", TELEGRAM_BOT_TOKEN="999:wrong-token")
    _, stderr = await asyncio.wait_for(proc.communicate(), 60)

    assert proc.returncode == 2
    assert stderr.decode().strip().splitlines()[-1] == (
        "lancelot: telegram: the Bot API server rejected TELEGRAM_BOT_TOKEN"
    )
    assert "wrong-token" not in stderr.decode()
