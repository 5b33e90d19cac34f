"""The data directory (LANCELOT_HOME) and the server secret kept in it."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from core.config import Settings
from core.errors import StorageError

SECRET_FILE = "secret.key"  # noqa: S105 (a file name, not a secret)


def prepare_home(path: Path) -> Path:
    """Create the data directory if needed and prove it is writable."""
    home = path.expanduser().resolve()
    probe = home / ".write-test"
    try:
        home.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        raise StorageError(
            f"LANCELOT_HOME {home}: not usable as a data directory: {exc.strerror or exc}"
        ) from None
    return home


def load_secret(settings: Settings, home: Path) -> bytes:
    """LANCELOT_SECRET if set; else the key in home/secret.key, made on first run (mode 0600)."""
    if settings.secret is not None:
        value = settings.secret.get_secret_value()
        if len(value) < 16:
            raise StorageError("LANCELOT_SECRET must be at least 16 characters")
        return value.encode()
    path = home / SECRET_FILE
    try:
        if not path.exists():
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32))
        value = path.read_text().strip()
    except OSError as exc:
        raise StorageError(f"{path}: cannot read or create the secret: {exc}") from None
    if len(value) < 32:
        raise StorageError(f"{path}: the secret is too short; delete the file to make a new one")
    return value.encode()
