"""Fixtures for the tool fabric: a workspace, capability tokens, and the shipped Soul's policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.governance.policy import PolicyEngine
from core.tools.capability import CapabilityTokens
from core.tools.workspace import Workspace
from soul import SHIPPED_VERSIONS_DIR, Soul, SoulStore


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "ws")


@pytest.fixture
def tokens() -> CapabilityTokens:
    return CapabilityTokens(b"tool-tests")


@pytest.fixture
def soul(tmp_path: Path) -> Soul:
    return SoulStore(SHIPPED_VERSIONS_DIR, tmp_path / "soul").load_active()


@pytest.fixture
def policy(soul: Soul, tokens: CapabilityTokens) -> PolicyEngine:
    return PolicyEngine(lambda: soul, tokens)
