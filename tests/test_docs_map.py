"""docs/architecture.md stays current: every repository path it names exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAP = REPO / "docs" / "architecture.md"
# A path in backticks: a file with an extension, or a folder ending in "/".
PATH = re.compile(r"`([A-Za-z0-9_./-]+(?:\.(?:py|yaml|md|html|toml)|/))`")
# Names under LANCELOT_HOME (the data directory), not in the repository.
HOME_PATHS = {
    "ledger.db",
    "state.db",
    "scheduler.db",
    "secret.key",
    "workspace/",
    "soul/",
    "skills/",
    "skill-proposals/",
    "snapshots/",
    "dryruns/",
    "undo/",
    "models/",
    "logs/",
}


def named_paths(text: str) -> list[str]:
    return [p for p in PATH.findall(text) if p not in HOME_PATHS]


def test_every_path_on_the_map_exists() -> None:
    text = MAP.read_text(encoding="utf-8")
    missing = [p for p in named_paths(text) if not (REPO / p).exists()]
    assert missing == []


def test_the_map_names_every_package_of_core() -> None:
    text = MAP.read_text(encoding="utf-8")
    packages = sorted(
        f"core/{d.name}/" for d in (REPO / "core").iterdir() if (d / "__init__.py").exists()
    )
    assert [p for p in packages if f"`{p}`" not in text] == []


def test_the_kernel_is_all_that_core_keeps_at_its_root() -> None:
    text = MAP.read_text(encoding="utf-8")
    loose = sorted(
        f"core/{f.name}" for f in (REPO / "core").glob("*.py") if f.name != "__init__.py"
    )
    assert [p for p in loose if f"`{p}`" not in text] == []
    assert len(loose) == 8  # bus, events, channel, orchestrator, errors, clock, features, state


def test_the_readme_links_the_map() -> None:
    assert "docs/architecture.md" in (REPO / "README.md").read_text(encoding="utf-8")


def test_a_missing_path_is_caught() -> None:
    assert named_paths("see `core/nowhere.py` and `bot/` and `state.db`") == [
        "core/nowhere.py",
        "bot/",
    ]
