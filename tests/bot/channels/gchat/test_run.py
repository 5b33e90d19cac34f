"""`lancelot run` with Google Chat configured: the real process serves the endpoint."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import aiohttp
import pytest

from tests.bot.channels.telegram.harness import free_port
from tests.fakes.gchat import ChatUser, FakeGoogle, texts
from tests.fakes.processes import reap, spawn

from .harness import OWNER_EMAIL, PROJECT_NUMBER, SPACE

REPO = Path(__file__).resolve().parents[4]


@pytest.mark.slow
async def test_lancelot_run_answers_google_chat(google: FakeGoogle, tmp_path: Path) -> None:
    home, port = tmp_path / "home", free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GCHAT_", "LANCELOT_"))}
    env.update(
        LANCELOT_HOME=str(home),
        LANCELOT_CONFIG=str(REPO / "config" / "lancelot.yaml"),
        LANCELOT_WEB_PORT=str(port),
        GCHAT_AUDIENCE=PROJECT_NUMBER,
        GCHAT_OWNER_EMAIL=OWNER_EMAIL,
        GCHAT_SPACE=SPACE,
        GCHAT_SERVICE_ACCOUNT_FILE=str(google.write_service_account(tmp_path / "sa.json")),
        GCHAT_WEBHOOK_URL=google.webhook_url,
        LANCELOT_GCHAT_API_BASE_URL=google.api_base_url,
        LANCELOT_GCHAT_CHAT_CERTS_URL=google.chat_certs_url,
    )
    proc = await spawn(
        sys.executable,
        "-m",
        "bot.cli",
        "run",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=REPO,
    )
    owner = ChatUser(
        google, f"http://127.0.0.1:{port}/gchat/events", PROJECT_NUMBER, email=OWNER_EMAIL
    )
    try:
        answer = None
        async with asyncio.timeout(60):
            while answer is None or answer.status != 200:
                await asyncio.sleep(0.2)
                try:
                    answer = await owner.say("/start")
                except aiohttp.ClientError:
                    continue
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(proc.communicate(), 30)
        await reap(proc)

    assert answer.message is not None
    assert any(t.startswith("Hello, I'm Lancelot") for t in texts(answer.message))
    assert proc.returncode == 0
    log = (home / "logs" / "lancelot.log").read_text()
    assert "gchat: serving (push: chat api)" in log
    for output in (log, stderr.decode()):
        assert google.webhook_key not in output
        assert google.webhook_token not in output
        assert "Traceback" not in output
