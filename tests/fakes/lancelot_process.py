"""`lancelot run` as a real process against the fakes, the way tests and benchmarks start it.

It gets a home of its own and a free port for its web app, and none of the developer's own
settings, switches or provider keys from the environment: what it talks to is what the
caller passes (a fake's address), never a real service.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import sys
from pathlib import Path
from typing import IO

from tests.fakes.processes import reap, spawn
from tests.fakes.telegram import FakeTelegram

REPO = Path(__file__).resolve().parents[2]
# What Lancelot reads from the environment, and the SDKs' own keys.
OWN = (
    *("LANCELOT_", "TELEGRAM_", "GCHAT_", "FEATURE_"),
    *("OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_"),
)
PAIRING_CODE = re.compile(rb"Pairing code for Telegram: ([A-Z2-9]{4}-[A-Z2-9]{4})")
Output = int | IO[bytes]


def free_port() -> int:
    """A TCP port nothing listens on now (127.0.0.1)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_env(
    home: Path, tg: FakeTelegram | None = None, *, owner: int | None = None, **settings: str
) -> dict[str, str]:
    """The environment: the shipped settings file, `home`, a free web port; with `tg`, its
    token and address (and `owner`, else the bot pairs); then `settings` on top."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(OWN)}
    env.update(
        LANCELOT_HOME=str(home),
        LANCELOT_CONFIG=str(REPO / "config" / "lancelot.yaml"),
        LANCELOT_WEB_PORT=str(free_port()),
    )
    if tg is not None:
        env.update(TELEGRAM_BOT_TOKEN=tg.token, TELEGRAM_API_BASE_URL=tg.base_url)
    if owner is not None:
        env["TELEGRAM_OWNER_ID"] = str(owner)
    env.update(settings)
    return env


async def lancelot_run(
    env: dict[str, str],
    *,
    stdout: Output = asyncio.subprocess.DEVNULL,
    stderr: Output = asyncio.subprocess.DEVNULL,
) -> asyncio.subprocess.Process:
    """`python -m bot.cli run` from the repository root, with no input."""
    return await spawn(
        sys.executable, "-m", "bot.cli", "run", env=env, cwd=REPO,
        stdin=asyncio.subprocess.DEVNULL, stdout=stdout, stderr=stderr,
    )  # fmt: skip


async def stop(proc: asyncio.subprocess.Process, grace: float = 30.0) -> None:
    """SIGTERM, `grace` seconds to stop cleanly, then SIGKILL to its whole group (nothing is
    left running, no pipe left open)."""
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.communicate(), grace)
    await reap(proc)


async def pairing_code(stdout: asyncio.StreamReader) -> str:
    """Lines of the console until the pairing code; RuntimeError if it ends first."""
    while line := await stdout.readline():
        if found := PAIRING_CODE.search(line):
            return found.group(1).decode()
    raise RuntimeError("lancelot run ended without printing a pairing code")
