"""One Lancelot per LANCELOT_HOME: a second refuses in one line, a crashed first leaves no lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from bot.app import assemble
from core.config import load_settings
from core.errors import StorageError
from tests.bot.test_cli import REPO, env_for, lancelot


async def test_a_second_app_on_the_same_home_is_refused(tmp_path: Path) -> None:
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home")})
    async with assemble(settings, web=False):
        with pytest.raises(
            StorageError, match=rf"in use by another Lancelot \(pid {os.getpid()}\)"
        ):
            async with assemble(settings, web=False):
                pass
    async with assemble(settings, web=False) as again:  # let go once the first stopped
        assert again.home == tmp_path / "home"


def wait_ready(port: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health/ready", timeout=2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("lancelot run never became ready")


def test_a_second_process_refuses_in_one_line_and_a_killed_one_leaves_no_lock(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    env = env_for(home)
    first = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "run"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=REPO,
    )
    try:
        wait_ready(env["LANCELOT_WEB_PORT"])
        second = lancelot("chat", env=env_for(home), stdin="/status\n")
        assert second.returncode == 2
        assert second.stderr.count("\n") == 1
        assert f"LANCELOT_HOME {home} is in use by another Lancelot (pid {first.pid})" in (
            second.stderr
        )
        assert first.poll() is None  # the first one runs on, untouched
        wait_ready(env["LANCELOT_WEB_PORT"])
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        after = lancelot("chat", env=env_for(home), stdin="/status\n")
        assert after.returncode == 0, after.stderr
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(timeout=30)
