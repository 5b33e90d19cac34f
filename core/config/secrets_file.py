"""LANCELOT_HOME/secrets.env: the provider keys `lancelot setup` asked for in the terminal,
owner-only (0600), written atomically. The settings read it; the environment wins over it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from soul.atomic import write_atomic

SECRETS_FILE = "secrets.env"
# Only these names are read from the file: it holds keys, not settings.
SECRET_NAMES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY")


def read_secrets(home: Path) -> dict[str, str]:
    """The keys kept in `home`/secrets.env (none when there is no such file)."""
    try:
        text = (home / SECRETS_FILE).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return {}
    found: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, value = line.strip().partition("=")
        if sep and name.strip() in SECRET_NAMES and value.strip():
            found[name.strip()] = value.strip()
    return found


def write_secrets(home: Path, keys: Mapping[str, str]) -> Path:
    """Keep `keys` (over the ones already kept) in `home`/secrets.env, 0600 from its first
    byte, replaced in one step (a crash leaves the old file or the new one, never half)."""
    unknown = sorted(set(keys) - set(SECRET_NAMES))
    if unknown:
        raise ValueError(f"not a key secrets.env keeps: {', '.join(unknown)}")
    home.mkdir(parents=True, exist_ok=True)
    merged = {**read_secrets(home), **keys}
    text = "".join(f"{name}={merged[name]}\n" for name in SECRET_NAMES if name in merged)
    path = home / SECRETS_FILE
    write_atomic(path, text)  # mkstemp: 0600 from its first byte
    return path
