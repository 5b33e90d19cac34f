"""Removes secrets (API keys, bearer tokens, passwords) from anything before it is stored."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MASK = "[REDACTED]"

# Well-known credential shapes, joined into one pattern so each string is scanned once.
_SHAPES = re.compile(
    "|".join(
        f"(?:{p})"
        for p in (
            r"sk-ant-[A-Za-z0-9_\-]{16,}",  # Anthropic
            r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}",  # OpenAI
            r"AIza[0-9A-Za-z_\-]{35}",  # Google API key
            r"gh[pousr]_[A-Za-z0-9]{36,}",  # GitHub
            r"github_pat_[A-Za-z0-9_]{40,}",
            r"xox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack
            r"AKIA[0-9A-Z]{16}",  # AWS access key id
            r"\b\d{6,12}:[A-Za-z0-9_\-]{35}\b",  # Telegram bot token
            r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWT
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
        )
    )
)
# "Bearer xyz", "password=xyz", "api_key: xyz", '"token": "xyz"': keep the name, mask the value.
_LABELLED = re.compile(
    r"(?i)(\bbearer\s+|\bbasic\s+"
    r"|\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|token)"
    r"[\"']?\s*[:=]\s*[\"']?)"
    r"([^\s\"'&,;}]{4,})"
)
_SENSITIVE_KEYS = re.compile(
    r"(?i)(password|passwd|secret|api[_-]?key|token|authorization|credential|private[_-]?key)"
)


class Redactor:
    """Masks credential-shaped text and any exact secret value it was told about."""

    def __init__(self, known_secrets: Iterable[str] = ()) -> None:
        self._known: list[str] = []
        for secret in known_secrets:
            self.add_secret(secret)

    def add_secret(self, secret: str) -> None:
        """Always mask this exact value (a configured token, say), longest first."""
        if len(secret) >= 6 and secret not in self._known:
            self._known.append(secret)
            self._known.sort(key=len, reverse=True)

    def text(self, value: str) -> str:
        """Mask secrets inside a string."""
        for secret in self._known:
            if secret in value:
                value = value.replace(secret, MASK)
        value = _SHAPES.sub(MASK, value)
        return _LABELLED.sub(lambda m: m.group(1) + MASK, value)

    def value(self, value: Any) -> Any:
        """Mask secrets anywhere inside JSON-like data; values under secret-named keys go whole."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                str(k): (MASK if _SENSITIVE_KEYS.search(str(k)) and v else self.value(v))
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value
