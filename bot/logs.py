"""Logging set-up: a file in LANCELOT_HOME and stderr, every line passed through redaction."""

from __future__ import annotations

import logging
import logging.handlers
import os
from io import TextIOWrapper
from pathlib import Path

from core.receipts.redaction import Redactor


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log whose every file (the first and each after a rollover) is 0600."""

    def _open(self) -> TextIOWrapper:
        stream = super()._open()
        os.chmod(self.baseFilename, 0o600)
        return stream


class RedactingFormatter(logging.Formatter):
    """Formats as usual, then masks anything secret-shaped (tokens in URLs, keys, passwords)."""

    def __init__(self, redactor: Redactor, fmt: str) -> None:
        super().__init__(fmt)
        self._redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        """The redacted line."""
        return self._redactor.text(super().format(record))


def configure_logging(home: Path, level: str, redactor: Redactor, *, quiet: bool) -> None:
    """Log to home/logs/lancelot.log; to stderr too (errors only when `quiet`: the console
    conversation is not interleaved with warnings, which the log file keeps)."""
    fmt = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    formatter = RedactingFormatter(redactor, fmt)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(level)
    stderr = logging.StreamHandler()
    stderr.setLevel(logging.ERROR if quiet else level)
    stderr.setFormatter(formatter)
    root.addHandler(stderr)
    try:
        (home / "logs").mkdir(parents=True, exist_ok=True, mode=0o700)
        file_handler = PrivateRotatingFileHandler(
            home / "logs" / "lancelot.log", maxBytes=10 << 20, backupCount=3, encoding="utf-8"
        )
    except OSError as exc:
        root.warning("logging to stderr only: %s", exc)
        return
    file_handler.setFormatter(formatter)
    root.addHandler(file_handler)
    # httpx2 is the HTTP client of the openai and anthropic SDKs: a line per model call,
    # written through the redacting formatter, was a sixth of a call's CPU.
    for noisy in ("aiohttp.access", "httpx", "httpx2", "telegram", "apscheduler"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # PTB logs every non-JSON 5xx body (a proxy's "Bad Gateway") with a traceback; the
    # Telegram channel reports those failures itself, in one line.
    logging.getLogger("telegram.request").setLevel(logging.CRITICAL)
