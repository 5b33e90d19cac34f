"""A channel declared in one file (fake_channel.py) and added to the registry is known to
the redactor, pairing, `lancelot pair` and the doctor, with no other file naming it."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.app import redactor_for
from bot.channels.registry import CHANNELS
from bot.doctor.runner import checks
from bot.pair_cli import run_pair
from bot.pairing import OwnerBook
from bot.runner import no_channel_warning
from core.config import load_settings
from tests.bot.channels.fake_channel import FakeSettings, fake_spec

TOKEN = "fake-token-4f1c9e7a2b"


def test_the_channels_secret_is_redacted(tmp_path: Path) -> None:
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path)})
    registry = CHANNELS.with_channel(fake_spec(FakeSettings(token=SecretStr(TOKEN))))
    line = f"calling https://peer.example/{TOKEN}/send"
    assert TOKEN not in redactor_for(settings, registry).text(line)
    assert TOKEN in redactor_for(settings, CHANNELS).text(line)  # only its descriptor knows it


def test_status_and_pair_show_its_owner(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path)})
    registry = CHANNELS.with_channel(fake_spec(FakeSettings(owner_id="ada")))
    described = OwnerBook(settings, tmp_path, channels=list(registry)).describe()
    assert described == "Fake: ada (from settings)"
    run_pair(settings, argparse.Namespace(reset=False), registry)
    assert "Fake: ada (from the settings, FAKE_OWNER_ID)" in capsys.readouterr().out.splitlines()


async def test_the_doctor_runs_its_check(tmp_path: Path) -> None:
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path)})
    registry = CHANNELS.with_channel(fake_spec(FakeSettings()))
    [check] = [c for c in checks(settings, 1.0, list(registry)) if c.name == "fake"]
    [finding] = await check.run()
    assert (finding.status, finding.fix) == ("failed", "set the fake token")


def test_a_name_registered_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="channel name used twice: telegram"):
        CHANNELS.with_channel(next(spec for spec in CHANNELS if spec.name == "telegram"))


def test_the_no_channel_warning_says_what_each_channel_needs() -> None:
    registry = CHANNELS.with_channel(fake_spec(FakeSettings()))
    warning = no_channel_warning(registry)
    assert "Telegram: set TELEGRAM_BOT_TOKEN" in warning
    assert "Google Chat: set GCHAT_AUDIENCE" in warning
    assert "Fake: set the fake token" in warning
