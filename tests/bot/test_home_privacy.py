"""LANCELOT_HOME is the owner's alone: 0700, and its databases, keys and logs 0600."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from tests.bot.test_cli import env_for, lancelot

PRIVATE_FILES = ("*.db", "*.db-wal", "*.db-shm", "*.key", "checkpoints.jsonl", "logs/*.log*")


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def private_files(home: Path) -> list[Path]:
    return sorted(p for pattern in PRIVATE_FILES for p in home.glob(pattern))


def test_a_new_home_is_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    old = os.umask(0o022)  # what most systems give a process
    try:
        chat = lancelot("chat", env=env_for(home), stdin="/status\n")
    finally:
        os.umask(old)
    assert chat.returncode == 0, chat.stderr
    assert mode(home) == 0o700
    assert mode(home / "logs") == 0o700
    found = private_files(home)
    names = {p.name for p in found}
    assert {"ledger.db", "state.db", "scheduler.db", "ledger-search.db", "memory.db"} <= names
    assert "lancelot.log" in names
    assert {"secret.key", "checkpoint.key", "checkpoints.jsonl"} <= names
    assert {str(p.relative_to(home)): oct(mode(p)) for p in found if mode(p) != 0o600} == {}


def test_a_home_made_before_is_made_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    os.chmod(home, 0o755)  # noqa: S103 (a home made by an older Lancelot: the case tested)
    old = os.umask(0o022)
    try:
        db = sqlite3.connect(home / "state.db")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE t (x)")
        db.commit()
        db.close()
        assert mode(home / "state.db") == 0o644
        chat = lancelot("chat", env=env_for(home), stdin="/status\n")
    finally:
        os.umask(old)
    assert chat.returncode == 0, chat.stderr
    assert mode(home) == 0o700
    found = private_files(home)
    assert {str(p.relative_to(home)): oct(mode(p)) for p in found if mode(p) != 0o600} == {}
