"""What a test may skip on a newcomer's machine must run in CI: one rule for all of them."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

# CI (.ci/run) sets CI=true; other runners use 1 or yes.
IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def unavailable(reason: str, *, needs: str) -> NoReturn:
    """Skip a test whose prerequisite is missing here, or fail it under CI, which has
    `needs` (a Docker engine, the shared test data, the local extra...)."""
    if IN_CI:
        pytest.fail(f"CI needs {needs}: {reason}")
    pytest.skip(reason, allow_module_level=True)  # at a module's top too: the whole file


def require_module(name: str, *, needs: str) -> None:
    """Skip (or, under CI, fail) unless `name` imports."""
    try:
        __import__(name)
    except ImportError as exc:
        unavailable(f"{name} does not import ({exc})", needs=needs)
