"""docs/settings.md is what the settings model and the loader say now: regenerated, it is the
checked-in file; every key has a meaning; every environment name it gives is one Lancelot reads."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel

from core.config import load_settings, unknown_environment
from core.config.loader import environment_names
from core.config.reference import attribute_docstrings, render_reference
from core.config.settings import Settings

REPO = Path(__file__).resolve().parents[3]
REFERENCE = REPO / "docs" / "settings.md"
ENV_NAME = re.compile(r"`((?:LANCELOT|TELEGRAM|GCHAT|OPENAI|ANTHROPIC|GEMINI)_[A-Z0-9_]+)`")
REGENERATE = "python -m core.config.reference > docs/settings.md"


def keys_without_meaning(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every key (in every section) whose docstring is missing."""
    missing = []
    docstrings = attribute_docstrings(model)
    for key, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            missing += keys_without_meaning(annotation, f"{prefix}{key}.")
        elif not docstrings.get(key, "").strip():
            missing.append(prefix + key)
    return missing


def test_the_checked_in_reference_is_the_generated_one() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == render_reference(), f"run `{REGENERATE}`"


def test_the_command_prints_the_reference() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "core.config.reference"],
        capture_output=True, text=True, check=False, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == REFERENCE.read_text(encoding="utf-8")


def test_every_key_says_what_it_means() -> None:
    assert keys_without_meaning(Settings) == []


def test_every_environment_name_the_loader_reads_is_listed() -> None:
    text = render_reference()
    assert [name for name in environment_names() if f"`{name}`" not in text] == []


def test_every_environment_name_listed_is_read() -> None:
    listed = set(ENV_NAME.findall(render_reference())) - {"LANCELOT_CONFIG"}
    patterns = {name for name in listed if "<" in name or name.endswith("_")}
    assert unknown_environment({name: "1" for name in listed - patterns}) == []


def test_a_short_name_and_the_long_one_set_the_same_key(tmp_path: Path) -> None:
    empty = tmp_path / "lancelot.yaml"
    empty.write_text("")
    short = load_settings(empty, environ={"LANCELOT_PUBLIC_URL": "https://a.example"})
    long = load_settings(empty, environ={"LANCELOT_WEB_PUBLIC_URL": "https://a.example"})
    assert short.web.public_url == long.web.public_url == "https://a.example"
    assert "`LANCELOT_PUBLIC_URL`, `LANCELOT_WEB_PUBLIC_URL`" in render_reference()
