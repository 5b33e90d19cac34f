"""Settings mistakes as a new user makes them, through the real `lancelot` process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def lancelot(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, cwd=REPO, timeout=120,
    )  # fmt: skip


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "GCHAT_"))}
    env.update(LANCELOT_HOME=str(tmp_path / "home"), **extra)
    return env


def test_an_unknown_variable_is_warned_about_with_the_closest_name(tmp_path: Path) -> None:
    result = lancelot("receipts", "verify", env=env_for(tmp_path, LANCELOT_WEB_PROT="8081"))
    assert (
        "lancelot: warning: LANCELOT_WEB_PROT is not a setting Lancelot knows"
        " (did you mean LANCELOT_WEB_PORT?); it is ignored"
    ) in result.stderr


def test_a_missing_config_file_is_an_error_not_the_defaults(tmp_path: Path) -> None:
    absent = tmp_path / "lancelot.yaml"
    result = lancelot("--config", str(absent), "run", env=env_for(tmp_path))
    assert result.returncode == 2
    assert result.stderr == f"lancelot: config error: {absent}: no such settings file\n"


def test_a_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    result = lancelot("run", env=env_for(tmp_path, LANCELOT_WEB_PORT="eighty"))
    assert result.returncode == 2
    assert result.stderr.startswith(
        "lancelot: config error: environment variable LANCELOT_WEB_PORT (sets web.port): "
    )
    assert "lancelot.yaml" not in result.stderr


def test_a_busy_port_says_to_set_lancelot_web_port(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        result = lancelot("run", env=env_for(tmp_path, LANCELOT_WEB_PORT=port))
    assert result.returncode == 2
    assert "set LANCELOT_WEB_PORT to a free one" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["run", "chat"])
def test_a_web_port_in_use_or_a_host_not_of_this_machine_stops_startup(
    tmp_path: Path, command: str
) -> None:
    # Both stop in one line: the console's receipt links would point at whatever serves the
    # port (never this home's page: one Lancelot holds a home) or at nothing.
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        taken = lancelot(command, env=env_for(tmp_path, LANCELOT_WEB_PORT=port))
    assert taken.returncode == 2, taken.stderr
    assert "set LANCELOT_WEB_PORT to a free one" in taken.stderr
    # 192.0.2.1 is a documentation address, never this machine's.
    elsewhere = lancelot(command, env=env_for(tmp_path, LANCELOT_WEB_HOST="192.0.2.1"))
    assert elsewhere.returncode == 2
    assert elsewhere.stderr.startswith("lancelot: cannot serve the web app on 192.0.2.1:")
    assert "LANCELOT_WEB_HOST is an address of this machine" in elsewhere.stderr
    for result in (taken, elsewhere):
        assert "Traceback" not in result.stderr
