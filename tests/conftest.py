"""Shared fixtures: every test gets its own LANCELOT_HOME under tmp_path and no real peers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# python-telegram-bot 22: report time periods as timedelta (reading them as ints warns).
os.environ.setdefault("PTB_TIMEDELTA", "true")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
PREFIXES = ("TELEGRAM_", "GCHAT_", "LANCELOT_", "FEATURE_", "OPENAI_", "ANTHROPIC_", "GEMINI_")


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's tokens, config or data directory."""
    for name in list(os.environ):
        if name.startswith(
            ("TELEGRAM_", "GCHAT_", "LANCELOT_", "FEATURE_", "OPENAI_", "ANTHROPIC_", "GEMINI_")
        ):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANCELOT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LANCELOT_CONFIG", str(REPO / "config" / "lancelot.yaml"))
    # No warm sandbox containers for apps that never run a command (tests that do, warm it).
    monkeypatch.setenv("LANCELOT_SANDBOX_WARM_AT_START", "false")
    # The real local model is proven in tests/core/llm; elsewhere it would only load (and be
    # assembled into every test's home) in the background.
    monkeypatch.setenv("FEATURE_LOCAL_MODEL", "false")
