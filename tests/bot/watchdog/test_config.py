"""The watchdog's settings: it keeps only the way to the owner (no model key, no server
secret), refuses to start when it could tell nobody or would call a live Lancelot dead, and
says so in one line with exit code 2, as every other command does."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from bot.watchdog.config import GchatAddress, TelegramAddress, WatchdogConfig, watchdog_config
from core.config import load_settings
from core.errors import ConfigError

REPO = Path(__file__).resolve().parents[3]
TOKEN = "123456:TEST-fake-token"


def settings_from(tmp_path: Path, **environ: str) -> WatchdogConfig:
    base = {"LANCELOT_HOME": str(tmp_path), "LANCELOT_CONFIG": str(tmp_path / "none.yaml")}
    (tmp_path / "none.yaml").write_text("{}\n")
    return watchdog_config(load_settings(environ={**base, **environ}))


def test_it_keeps_the_token_the_owner_and_nothing_else(tmp_path: Path) -> None:
    config = settings_from(
        tmp_path,
        TELEGRAM_BOT_TOKEN=TOKEN,
        TELEGRAM_OWNER_ID="1001,1002",
        OPENAI_API_KEY="sk-this-is-no-business-of-the-watchdog-at-all",
        LANCELOT_SECRET="a-server-secret-it-never-needs",
        LANCELOT_WATCHDOG_AFTER_SECONDS="90",
    )
    assert config.telegram is not None
    assert config.telegram.token.get_secret_value() == TOKEN
    assert config.telegram.owner_ids == (1001, 1002)
    assert config.after == 90
    assert config.check_every == 5.0
    assert config.gchat is None
    held = {f.name for f in fields(WatchdogConfig)} | {f.name for f in fields(TelegramAddress)}
    assert held == {
        "home", "after", "telegram", "gchat", "zone", "base_url", "token", "owner_ids"
    }  # fmt: skip
    assert config.zone == "UTC"  # the machine's (TZ in tests), as every card's default
    assert {f.name for f in fields(GchatAddress)} == {
        "webhook_url", "service_account_file", "space", "api_base_url"
    }  # fmt: skip
    assert "sk-this" not in repr(config)
    assert "server-secret" not in repr(config)


def test_by_default_it_waits_60_s_and_lancelot_beats_every_5_s(tmp_path: Path) -> None:
    config = settings_from(tmp_path, TELEGRAM_BOT_TOKEN=TOKEN)
    assert config.after == 60
    assert config.check_every == 5
    assert load_settings(environ={"LANCELOT_HOME": str(tmp_path)}).watchdog.heartbeat_seconds == 5


def test_with_no_way_to_the_owner_it_refuses_to_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no way to reach the owner: set TELEGRAM_BOT_TOKEN"):
        settings_from(tmp_path)


def test_a_google_chat_webhook_alone_is_a_way_to_the_owner(tmp_path: Path) -> None:
    config = settings_from(tmp_path, GCHAT_WEBHOOK_URL="https://chat.example.org/hook?key=k")
    assert config.telegram is None
    assert config.gchat is not None


def test_beats_slower_than_half_the_limit_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"watchdog: .*heartbeat_seconds must be at most half"):
        settings_from(tmp_path, TELEGRAM_BOT_TOKEN=TOKEN, LANCELOT_WATCHDOG_HEARTBEAT_SECONDS="40")


@pytest.mark.parametrize(
    ("environ", "said"),
    [
        ({}, "lancelot: watchdog: no way to reach the owner"),
        (
            {"TELEGRAM_BOT_TOKEN": TOKEN, "LANCELOT_WATCHDOG_AFTER_SECONDS": "soon"},
            "lancelot: config error: environment variable LANCELOT_WATCHDOG_AFTER_SECONDS",
        ),
        (
            {"TELEGRAM_BOT_TOKEN": TOKEN, "LANCELOT_WATCHDOG_AFTER_SECONDS": "-5"},
            "greater than 0",
        ),
    ],
)
def test_the_command_says_what_is_wrong_in_one_line(
    tmp_path: Path, environ: dict[str, str], said: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANCELOT_", "TELEGRAM_"))}
    env = {k: v for k, v in env.items() if not k.startswith("GCHAT_")}
    env.update(LANCELOT_HOME=str(tmp_path), **environ)
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "watchdog"],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert said in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
