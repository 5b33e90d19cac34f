"""The data directory (LANCELOT_HOME) and the server secret kept in it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

from core.config import Settings
from core.errors import StorageError

SECRET_FILE = "secret.key"  # noqa: S105 (a file name, not a secret)
LOCK_FILE = "lancelot.lock"
PRIVATE_FILES = ("*.db", "*.db-wal", "*.db-shm", "*.db-journal", "*.key", "*.jsonl")


def prepare_home(path: Path) -> Path:
    """Create the data directory if needed (0700: receipts, secrets and the owner's files are
    nobody else's business), make it owner-only, and prove it is writable."""
    home = path.expanduser().resolve()
    probe = home / ".write-test"
    try:
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(PermissionError):  # a directory someone else owns
            os.chmod(home, 0o700)
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        raise StorageError(
            f"LANCELOT_HOME {home}: not usable as a data directory: {exc.strerror or exc}"
        ) from None
    return home


@contextlib.contextmanager
def home_lock(home: Path) -> Iterator[None]:
    """Hold the home for this process: one Lancelot per LANCELOT_HOME (a second would run
    the same jobs twice and remove the first one's sandbox containers).

    An flock on LANCELOT_HOME/lancelot.lock, which holds the holder's pid; the kernel lets
    go when the process ends, however it ends, so a crash leaves no stale lock. Raises
    StorageError naming the holder."""
    path = home / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise StorageError(f"{path}: cannot open the lock file: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            raise StorageError(
                f"LANCELOT_HOME {home} is in use by another Lancelot (pid {holder}); stop it"
                " first, or give this one another LANCELOT_HOME"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def keep_home_private(home: Path) -> None:
    """Owner-only (0600) access to every database, journal, key and checkpoint file at the
    top of the home: each opener does this for its own file, this catches any other (run
    once every service has opened its files)."""
    for pattern in PRIVATE_FILES:
        for path in home.glob(pattern):
            with contextlib.suppress(OSError):
                os.chmod(path, 0o600)


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
