"""The owner's MCP switches on disk: kept across a reload, private to the owner, and a
broken file is one warning with everything on, never a crash."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from core.mcp.choices import McpChoices


def test_a_choice_is_kept_for_the_next_start(tmp_path: Path) -> None:
    path = tmp_path / "mcp_choices.json"
    choices = McpChoices(path)
    choices.set_server("git", False)
    choices.set_tool("time", "convert_time", False)
    again = McpChoices(path)
    assert again.switched_off() == frozenset({"git"})
    assert (again.server_on("git"), again.server_on("time")) == (False, True)
    assert (again.tool_on("time", "convert_time"), again.tool_on("time", "now")) == (False, True)
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"servers": 3, "tools": {"a": 1}}'])
def test_a_broken_file_leaves_everything_on(
    tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "mcp_choices.json"
    path.write_text(text)
    with caplog.at_level(logging.WARNING):
        choices = McpChoices(path)
    assert choices.switched_off() == frozenset()
    assert choices.tool_on("a", "b")
    if text == "{not json":
        assert f"MCP choices: {path} cannot be read" in caplog.text


def test_a_tools_tier_is_kept_and_cleared(tmp_path: Path) -> None:
    path = tmp_path / "mcp_choices.json"
    choices = McpChoices(path)
    choices.set_tier("git", "git_commit", "T1")
    choices.set_tier("git", "git_log", "T2")
    choices.set_tier("git", "git_log", None)  # back to what the Soul and the server say
    again = McpChoices(path)
    assert again.tier("git", "git_commit") == "T1"
    assert again.chosen_tier("mcp.git.git_commit") == "T1"
    assert again.tier("git", "git_log") is None
    assert again.chosen_tier("shell.exec") is None


def test_a_tier_that_is_no_tier_is_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "mcp_choices.json"
    path.write_text('{"tiers": {"git": {"git_commit": "T-1", "git_log": "T2"}, "time": 3}}')
    with caplog.at_level(logging.WARNING):
        choices = McpChoices(path)
    assert choices.tier("git", "git_commit") is None
    assert choices.tier("git", "git_log") == "T2"
    assert "git.git_commit's tier 'T-1' is none of T0, T1, T2, T3; ignored" in caplog.text
