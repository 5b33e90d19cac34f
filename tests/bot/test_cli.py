"""`lancelot` as a person runs it: real processes, real ports, a real browser-like client."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from core.memory import Memory, MemoryStore, Provenance
from core.receipts.ledger import SqliteLedger

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "GCHAT_"))}
    env.update(
        LANCELOT_HOME=str(home),
        LANCELOT_CONFIG=str(REPO / "config" / "lancelot.yaml"),
        LANCELOT_WEB_PORT=str(free_port()),
    )
    env.update(extra)
    return env


def lancelot(
    *args: str, env: dict[str, str], stdin: str = "", timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=timeout,
    )


def test_broken_config_exits_2_with_one_line(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("web:\n  port: [\n")
    result = lancelot("run", env=env_for(tmp_path / "home", LANCELOT_CONFIG=str(config)))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert str(config) in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_key_and_bad_value_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("limits:\n  rate_per_minute: -5\n")
    result = lancelot("chat", env=env_for(tmp_path / "home", LANCELOT_CONFIG=str(config)))
    assert result.returncode == 2
    assert "limits.rate_per_minute" in result.stderr
    assert "Traceback" not in result.stderr


def test_unusable_data_directory_exits_2(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = lancelot("run", env=env_for(blocker / "home"))
    assert result.returncode == 2
    assert "LANCELOT_HOME" in result.stderr
    assert "not usable" in result.stderr
    assert "Traceback" not in result.stderr


def test_corrupt_ledger_exits_2(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "ledger.db").write_bytes(b"\x00garbage" * 4096)
    result = lancelot("run", env=env_for(home))
    assert result.returncode == 2
    assert "ledger.db" in result.stderr
    assert "Traceback" not in result.stderr


def test_verify_reports_tampering(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = env_for(home)
    chat = lancelot("chat", env=env, stdin="/status\n/help\n")
    assert chat.returncode == 0, chat.stderr
    ok = lancelot("receipts", "verify", env=env)
    assert ok.returncode == 0
    assert ok.stdout.startswith("ok:")
    db = sqlite3.connect(home / "ledger.db")
    db.execute("DROP TRIGGER receipts_no_update")
    db.execute("UPDATE receipts SET action_name = 'nothing-to-see' WHERE seq = 3")
    db.commit()
    db.close()
    bad = lancelot("receipts", "verify", env=env)
    assert bad.returncode == 1
    assert "TAMPERED at receipt #3" in bad.stdout


def test_chat_from_a_file_answers_in_order_and_a_number_picks_from_the_card_above(
    tmp_path: Path,
) -> None:
    requests = tmp_path / "requests.txt"
    requests.write_text("/status\n1\n9999\n")
    with requests.open() as stdin:
        chat = subprocess.run(
            [sys.executable, "-m", "bot.cli", "chat"],
            stdin=stdin, capture_output=True, text=True, env=env_for(tmp_path / "home"),
            cwd=REPO, timeout=60,
        )  # fmt: skip
    assert chat.returncode == 0, chat.stderr
    out = chat.stdout
    # /status shows [1] Crusader on; the 1 on the next line presses it, not a dead number.
    assert "[1] Crusader on" in out
    assert "There is no button 1" not in out
    status = out.index("Status")
    pressed = out.index("Crusader mode on")
    dead = out.index("There is no button 9999")
    assert status < pressed < dead


async def test_chat_then_open_the_receipts_link_like_a_browser(tmp_path: Path) -> None:
    """The newcomer's path: chat, ask /receipts, open the link, see their own receipts."""
    env = env_for(tmp_path / "home")
    port = env["LANCELOT_WEB_PORT"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    assert proc.stdin
    assert proc.stdout
    try:
        proc.stdin.write("/start\n/receipts\n")
        proc.stdin.flush()
        link = None
        transcript = ""
        for line in proc.stdout:
            transcript += line
            match = re.search(r"http://127\.0\.0\.1:\d+/receipts\?t=\S+", line)
            if match:
                link = match.group(0)
                break
        assert link, transcript
        assert f":{port}/" in link
        # A browser keeps cookies for 127.0.0.1; aiohttp needs unsafe=True to do the same.
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
            async with browser.get(f"http://127.0.0.1:{port}/receipts") as response:
                assert response.status == 401
            async with browser.get(link) as response:
                assert response.status == 200
                assert "HttpOnly" in response.headers.get("Set-Cookie", "")
            async with browser.get(f"http://127.0.0.1:{port}/receipts") as response:
                page = await response.text()
                assert response.status == 200
                assert "start" in page
                assert "command" in page
            async with browser.get(link) as response:
                # The link worked once; this browser is signed in, so it lands on the list.
                assert response.status == 200
                assert str(response.url).endswith("/receipts")
            async with aiohttp.ClientSession() as stranger, stranger.get(link) as response:
                assert response.status == 401  # without the session, a used link is spent
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        errors = proc.stderr.read() if proc.stderr else ""
        for pipe in (proc.stdout, proc.stderr):
            if pipe:
                pipe.close()
    assert proc.returncode == 0, errors


@pytest.mark.parametrize("command", ["run"])
def test_run_without_tokens_or_terminal_serves_the_web_app(tmp_path: Path, command: str) -> None:
    env = env_for(tmp_path / "home")
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", command],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    try:
        url = f"http://127.0.0.1:{env['LANCELOT_WEB_PORT']}/health/ready"
        import time
        import urllib.request

        deadline = time.monotonic() + 30
        body = ""
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    body = response.read().decode()
                    break
            except OSError:
                time.sleep(0.1)
        assert '"ready": true' in body
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        errors = proc.stderr.read() if proc.stderr else ""
        for pipe in (proc.stdout, proc.stderr):
            if pipe:
                pipe.close()
    assert proc.returncode == 0
    assert "serving the web app only" in errors


def test_memory_review_and_export_from_the_terminal(tmp_path: Path) -> None:
    home = tmp_path / "home"
    missing = lancelot("memory", "review", env=env_for(home))
    assert missing.returncode == 2
    assert "no memory database here" in missing.stderr
    assert not (home / "memory.db").exists()  # nothing created

    async def remember() -> None:
        async with MemoryStore(home / "memory.db") as store:
            receipts = SqliteLedger(home / "ledger.db")
            async with receipts:
                memory = Memory(store, receipts)
                await memory.remember("The owner's server is atlas.", provenance=Provenance.OWNER)

    home.mkdir()
    asyncio.run(remember())
    review = lancelot("memory", "review", env=env_for(home))
    assert review.returncode == 0, review.stderr
    assert "remember" in review.stdout
    out = tmp_path / "memory.jsonl"
    export = lancelot("memory", "export", str(out), env=env_for(home))
    assert export.returncode == 0, export.stderr
    assert "server is atlas" in out.read_text()


def test_run_serves_on_uvloop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`lancelot run` serves on uvloop's event loop, not asyncio's own."""
    import uvloop

    import bot.cli
    import bot.runner

    loops: list[type[asyncio.AbstractEventLoop]] = []

    async def serve(*args: object, **kwargs: object) -> int:
        loops.append(type(asyncio.get_running_loop()))
        return 0

    for key, value in env_for(tmp_path / "home").items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(bot.runner, "serve", serve)
    monkeypatch.setattr(bot.cli, "configure_logging", lambda *args, **kwargs: None)
    assert bot.cli.main(["run"]) == 0
    assert loops == [uvloop.Loop]
