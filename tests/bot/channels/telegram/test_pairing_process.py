"""Pairing as a new user meets it: `lancelot run` (a real process) with only a bot token prints
the code on its console and in its log; sending it on the phone makes you the owner."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from tests.bot.channels.telegram.harness import OWNER
from tests.fakes.lancelot_process import lancelot_run, pairing_code, run_env
from tests.fakes.processes import reap
from tests.fakes.telegram import FakeTelegram


@pytest.mark.slow
async def test_lancelot_run_prints_the_code_and_its_sender_becomes_the_owner(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = run_env(home, tg, LANCELOT_SANDBOX_WARM_AT_START="false", FEATURE_LOCAL_MODEL="false")
    process = await lancelot_run(env, stdout=asyncio.subprocess.PIPE)
    try:
        assert process.stdout is not None
        async with asyncio.timeout(60):
            code = await pairing_code(process.stdout)
        await tg.wait_for(lambda: tg.is_polling)
        tg.user_message("hello")
        [asked] = await tg.wait_for_sent(1, timeout=30)
        tg.user_message(code)
        greeting = (await tg.wait_for_sent(2, timeout=30))[1]
        await tg.wait_for_sent(3, timeout=30)  # onboarding's first question
        tg.user_message("/help")
        answer = (await tg.wait_for_sent(4, timeout=30))[3]
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 60)
        await reap(process)

    assert process.returncode == 0
    assert "Send me the code shown where Lancelot runs" in asked["plain_text"]
    assert greeting["chat_id"] == OWNER
    assert "you are now my owner on Telegram" in greeting["plain_text"]
    assert "/status" in answer["plain_text"]
    log = (home / "logs" / "lancelot.log").read_text()
    assert f"Pairing code for Telegram: {code}" in log
    assert f"{OWNER} is now the owner on Telegram" in log
