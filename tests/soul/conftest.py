"""Soul fixtures: a private copy of the shipped versions and a store over it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from soul import SHIPPED_VERSIONS_DIR, SoulStore
from soul.linter import lint_file
from soul.schema import Soul


@pytest.fixture(scope="session")
def v1() -> Soul:
    """The shipped soul_v1.yaml, linted (frozen: one for every test)."""
    soul = lint_file(SHIPPED_VERSIONS_DIR / "soul_v1.yaml").soul
    assert soul is not None
    return soul


@pytest.fixture
def v1_text() -> str:
    """The shipped soul_v1.yaml, as text."""
    return (SHIPPED_VERSIONS_DIR / "soul_v1.yaml").read_text(encoding="utf-8")


@pytest.fixture
def shipped(tmp_path: Path) -> Path:
    """A copy of soul/versions; tests never write into the repository."""
    target = tmp_path / "shipped"
    shutil.copytree(SHIPPED_VERSIONS_DIR, target)
    return target


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """The runtime state directory (LANCELOT_HOME/soul in production)."""
    return tmp_path / "home" / "soul"


@pytest.fixture
def store(shipped: Path, state: Path) -> SoulStore:
    """A store over the copied shipped versions and an empty state directory."""
    return SoulStore(shipped, state)
