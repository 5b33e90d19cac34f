"""`lancelot setup`: keys typed in the terminal (not echoed) are checked against the provider
(the wire fakes) and kept, 0600, in LANCELOT_HOME/secrets.env, which the settings read;
the environment wins; a refused key is reported and not kept."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from pathlib import Path

from bot.setup_cli import run_setup
from core.config import load_settings
from core.config.secrets_file import SECRETS_FILE, read_secrets, write_secrets
from tests.bot.test_cli import REPO, env_for
from tests.fakes.llm import FakeAnthropic, FakeOpenAI
from tests.fakes.processes import reap, spawn

GOOD = "test-openai-key-not-real"
BAD = "test-anthropic-key-not-real"


async def _setup(env: dict[str, str], typed: str) -> tuple[int, str, str]:
    """Run `lancelot setup` with no terminal (getpass reads stdin then), as a new session."""
    proc = await spawn(
        sys.executable,
        "-m",
        "bot.cli",
        "setup",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=REPO,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(typed.encode()), 60)
    finally:
        await reap(proc)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_setup_checks_each_key_and_keeps_the_good_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with FakeOpenAI() as openai, FakeAnthropic() as anthropic:
        env = env_for(home, OPENAI_BASE_URL=openai.base_url, ANTHROPIC_BASE_URL=anthropic.base_url)
        for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
            env.pop(name, None)
        anthropic.fail_next(401)
        code, out, err = await _setup(env, f"{GOOD}\n{BAD}\n\n")
        assert openai.models_called() == ["gpt-4o-mini"]  # one tiny call a key
        assert len(anthropic.requests) == 1

    assert code == 1  # a key was refused
    assert "✓ openai: gpt-4o-mini answered at 127.0.0.1" in out
    assert "✗ anthropic: 127.0.0.1" in out
    assert "refused the key" in out
    assert "not kept" in out
    for shown in (out, err):  # never echoed
        assert GOOD not in shown
        assert BAD not in shown
    path = home / SECRETS_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_secrets(home) == {"OPENAI_API_KEY": GOOD}
    settings = load_settings(environ={"LANCELOT_HOME": str(home)})
    assert settings.llm.openai_api_key is not None
    assert settings.llm.openai_api_key.get_secret_value() == GOOD
    assert settings.llm.anthropic_api_key is None
    # The environment wins over the file.
    mine = load_settings(environ={"LANCELOT_HOME": str(home), "OPENAI_API_KEY": "from-env"})
    assert mine.llm.openai_api_key is not None
    assert mine.llm.openai_api_key.get_secret_value() == "from-env"


async def test_a_home_that_cannot_be_written_is_said_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("a file, not a directory")
    async with FakeOpenAI() as openai:
        env = env_for(home, OPENAI_BASE_URL=openai.base_url)
        code, out, err = await _setup(env, f"{GOOD}\n\n\n")
    assert code == 2
    assert f"✗ cannot write {home / SECRETS_FILE}" in out
    assert "nothing was kept" in out
    assert "Traceback" not in err


async def test_no_key_typed_changes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    code, out, _ = await _setup(env_for(home), "\n\n\n")
    assert code == 0
    assert "No key given; nothing changed." in out
    assert not (home / SECRETS_FILE).exists()


async def test_the_end_of_input_skips_the_keys_not_asked_yet(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with FakeOpenAI() as openai:
        env = env_for(home, OPENAI_BASE_URL=openai.base_url)
        for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
            env.pop(name, None)
        code, out, err = await _setup(env, f"{GOOD}\n")  # then Ctrl-D
    assert code == 0, err
    assert "✓ openai" in out
    assert read_secrets(home) == {"OPENAI_API_KEY": GOOD}
    assert "Traceback" not in err
    empty_code, empty_out, empty_err = await _setup(env_for(tmp_path / "other"), "")
    assert empty_code == 0, empty_err
    assert "No key given; nothing changed." in empty_out
    assert "Traceback" not in empty_err


def test_ctrl_c_keeps_nothing_and_says_so(tmp_path: Path) -> None:
    said: list[str] = []

    def interrupted(prompt: str) -> str:
        raise KeyboardInterrupt

    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home")})
    assert run_setup(settings, ask=interrupted, say=said.append) == 130
    assert said[-1] == "\nSetup cancelled: nothing was kept."
    assert not (tmp_path / "home" / SECRETS_FILE).exists()


def test_the_file_is_replaced_whole_and_keeps_other_keys(tmp_path: Path) -> None:
    write_secrets(tmp_path, {"GEMINI_API_KEY": "g-1"})
    write_secrets(tmp_path, {"OPENAI_API_KEY": "o-1"})
    assert read_secrets(tmp_path) == {"GEMINI_API_KEY": "g-1", "OPENAI_API_KEY": "o-1"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [SECRETS_FILE]  # no temp file left
    assert stat.S_IMODE(os.stat(tmp_path / SECRETS_FILE).st_mode) == 0o600
