"""The docs stay current: every repository path that README.md or a page of docs/ names
exists, every link between them leads to a file, and docs/architecture.md maps all of core."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAP = REPO / "docs" / "architecture.md"
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# A path in backticks: a file with an extension, or a folder ending in "/".
PATH = re.compile(r"`([A-Za-z0-9_./-]+(?:\.(?:py|yaml|md|html|toml)|/))`")
# A Markdown link's target, without its #anchor.
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
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
HOME = "LANCELOT_HOME/"  # a path inside the data directory
# Files the owner might keep in the workspace, named as examples.
WORKSPACE_EXAMPLES = {"notes/garden.md", "garden.md"}
# A name every folder of a kind holds: it must exist in at least one of them.
PER_FOLDER = {"skill.yaml": "skills/*/skill.yaml"}


def named_paths(text: str) -> list[str]:
    """The repository paths a page names (data-directory and workspace names left out)."""
    outside = HOME_PATHS | WORKSPACE_EXAMPLES
    return [p for p in PATH.findall(text) if p not in outside and not p.startswith(HOME)]


def missing_paths(text: str) -> list[str]:
    """The named paths that are not in the repository."""
    missing = []
    for path in named_paths(text):
        found = any(REPO.glob(PER_FOLDER[path])) if path in PER_FOLDER else (REPO / path).exists()
        if not found:
            missing.append(path)
    return missing


def broken_links(page: Path) -> list[str]:
    """The page's links to local files that do not exist, resolved from the page's folder."""
    targets = [t for t in LINK.findall(page.read_text(encoding="utf-8")) if "://" not in t]
    return [t for t in targets if not (page.parent / t).exists()]


def test_every_path_named_in_the_docs_exists() -> None:
    missing = {p.name: missing_paths(p.read_text(encoding="utf-8")) for p in PAGES}
    assert {page: paths for page, paths in missing.items() if paths} == {}


def test_every_link_between_the_docs_leads_to_a_file() -> None:
    assert {p.name: broken_links(p) for p in PAGES if broken_links(p)} == {}


def test_the_readme_links_every_page_of_the_docs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    pages = [f"docs/{p.name}" for p in PAGES[1:]]
    assert [p for p in pages if f"]({p})" not in readme] == []


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


def test_a_missing_path_is_caught() -> None:
    text = "see `core/nowhere.py`, `bot/`, `state.db`, `LANCELOT_HOME/inbox/` and `skill.yaml`"
    assert missing_paths(text) == ["core/nowhere.py"]
    assert missing_paths("`nowhere/skill.yaml`") == ["nowhere/skill.yaml"]


def test_a_broken_link_is_caught(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("[here](page.md), [there](gone.md#top) and [web](https://example.org/x.md)")
    assert broken_links(page) == ["gone.md"]
