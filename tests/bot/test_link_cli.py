"""`lancelot link`: a receipt-page link from the running Lancelot, without a chat (what a
container's owner has: `docker exec ... lancelot link`). Real processes, a real socket."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import stat
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import pytest

from bot.control import SOCKET_FILE
from bot.web import SESSION_COOKIE
from tests.fakes.lancelot_process import REPO, lancelot_run, run_env, stop

pytestmark = pytest.mark.slow


async def link(env: dict[str, str]) -> tuple[int, str, str]:
    """`lancelot link` as a person types it: exit code, stdout, stderr."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "link", env=env, cwd=REPO,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def ready(home: Path, port: str) -> None:
    """Until the web app answers ready and the control socket is there."""
    async with aiohttp.ClientSession() as http:
        for _ in range(600):
            try:
                async with http.get(f"http://127.0.0.1:{port}/health/ready") as answer:
                    if answer.status == 200 and (home / SOCKET_FILE).exists():
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError("lancelot run was not ready within 60 s")


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[tuple[Path, dict[str, str]]]:
    """`lancelot run` with no token at all: the web page alone."""
    home = tmp_path / "home"
    env = run_env(home, LANCELOT_SANDBOX_WARM_AT_START="false", FEATURE_LOCAL_MODEL="false")
    proc = await lancelot_run(env)
    try:
        await ready(home, env["LANCELOT_WEB_PORT"])
        yield home, env
    finally:
        await stop(proc)
    assert not (home / SOCKET_FILE).exists()  # a clean stop takes the socket away


async def test_link_prints_a_one_time_link_that_opens_the_receipts(
    running: tuple[Path, dict[str, str]],
) -> None:
    home, env = running
    code, out, err = await link(env)
    assert code == 0, err
    url = out.strip()
    parts = urlsplit(url)
    assert parts.path == "/receipts"
    assert parts.port == int(env["LANCELOT_WEB_PORT"])
    jar = aiohttp.CookieJar(unsafe=True)  # the page is on 127.0.0.1
    async with aiohttp.ClientSession(cookie_jar=jar) as http:
        async with http.get(url) as page:
            assert page.status == 200
            assert SESSION_COOKIE in {c.key for c in http.cookie_jar}
        async with http.get(f"http://127.0.0.1:{parts.port}/receipts") as signed_in:
            assert signed_in.status == 200
            assert "command" in await signed_in.text()
    async with aiohttp.ClientSession() as stranger, stranger.get(url) as again:
        assert again.status in (401, 403, 410)  # a link works once
        assert "run `lancelot link` where Lancelot runs" in await again.text()
    mode = stat.S_IMODE(os.stat(home / SOCKET_FILE).st_mode)
    assert mode == 0o600


async def test_link_is_recorded_and_a_bad_request_changes_nothing(
    running: tuple[Path, dict[str, str]],
) -> None:
    home, env = running
    with socket.socket(socket.AF_UNIX) as raw:
        raw.connect(str(home / SOCKET_FILE))
        raw.sendall(b"rm -rf /\n")
        answer = json.loads(raw.makefile("rb").readline())
    assert answer == {"ok": False, "error": "unknown request 'rm -rf /'; try: link"}
    code, out, _ = await link(env)
    assert code == 0
    assert out.startswith("http://")
    assert await links_recorded(home) == [("link", '{"via":"lancelot link"}')]


async def links_recorded(home: Path) -> list[tuple[str, str]]:
    """The `command` receipts the ledger holds (committed within a moment of the answer)."""
    for _ in range(50):
        db = sqlite3.connect(f"file:{home / 'ledger.db'}?mode=ro", uri=True)
        try:
            rows = db.execute(
                "SELECT action_name, inputs FROM receipts WHERE action_type = 'command'"
            ).fetchall()
        finally:
            db.close()
        if rows:
            return [(str(a), str(i)) for a, i in rows]
        await asyncio.sleep(0.1)
    return []


async def test_without_a_running_lancelot_link_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    code, out, err = await link(run_env(home))
    assert code == 1
    assert out == ""
    assert err.startswith(f"lancelot: Lancelot is not running with LANCELOT_HOME={home}")
    assert "start it with `lancelot run`" in err
