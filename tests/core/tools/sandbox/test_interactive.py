"""The `docker run` spelling of the sandbox's hardening (for a program that speaks over
stdio, an MCP server): every keyword host_config gives is spelled, and one it cannot spell
stops the start instead of being left out. What the flags do is checked inside a real
container by tests/core/mcp/test_sandboxed.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.tools.sandbox.interactive import run_flags
from core.tools.sandbox.limits import SandboxLimits, host_config


def test_every_hardening_keyword_has_its_flag(tmp_path: Path) -> None:
    hardening = host_config(SandboxLimits(memory_mb=300, pids=64), tmp_path)
    flags = run_flags(hardening)
    assert "--memory=300m" in flags
    assert "--pids-limit=64" in flags
    assert f"--volume={tmp_path.resolve()}:/workspace:rw" in flags


def test_a_hardening_keyword_without_a_flag_stops_the_start(tmp_path: Path) -> None:
    hardening = {**host_config(SandboxLimits(), tmp_path), "device_requests": []}
    with pytest.raises(ValueError, match="'device_requests' has no docker run flag"):
        run_flags(hardening)
