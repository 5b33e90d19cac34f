"""Removes secrets (API keys, bearer tokens, passwords) from anything before it is stored."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any
from urllib.parse import unquote_plus

from core.receipts.encodings import (
    BASE64_RUN,
    HEX_RUN,
    URL_RUN,
    base64_texts,
    decodings,
    hex_texts,
    may_hold_encoding,
)

MASK = "[REDACTED]"
ENCODING_DEPTH = 3  # base64 of the URL-encoding of hex, and no further (values are bounded)

# Well-known credential shapes, each with the fixed text it cannot match without: a pattern
# runs only on text holding one of its marks (a substring test is far cheaper than a regex
# scan, and most receipt text holds none). Prefixes must start a word:
# "task-runner-configuration" holds "sk-" but is no key.
_SHAPE_PATTERNS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("sk-ant-",), r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_\-]{16,}"),  # Anthropic
    (("sk-",), r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}"),  # OpenAI
    (("AIza",), r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{35}"),  # Google API key
    (tuple(f"gh{c}_" for c in "pousr"), r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{36,}"),  # GitHub
    (("github_pat_",), r"(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{40,}"),
    (("xox",), r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9\-]{10,}"),  # Slack
    (("AKIA",), r"(?<![A-Za-z0-9])AKIA[0-9A-Z]{16}"),  # AWS access key id
    (tuple(f"{d}:" for d in "0123456789"), r"\b[0-9]{6,12}:[A-Za-z0-9_\-]{35}\b"),  # Telegram
    (("eyJ",), r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),  # JWT
    (
        ("-----BEGIN ",),
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    ),
    (("@",), r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),  # user:password in a URL (needs both)
)
_SHAPES = tuple((marks, re.compile(pattern)) for marks, pattern in _SHAPE_PATTERNS)
_MARKED = tuple((mark, pattern) for marks, pattern in _SHAPES for mark in marks)  # in order
# "Bearer xyz", "password=xyz", "api_key: xyz", '"token": "xyz"': keep the name, mask the value.
# After "Bearer"/"Basic" only a credential-looking value counts ("basic question" is prose):
# one with a digit or base64 padding, or at least 16 characters. A name may follow "_"
# (DB_PASSWORD=...).
_VALUE = r"[^\s\"'&,;}]"
_LABELLED = re.compile(
    r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token)\s+)?"
    rf"|\b(?:bearer|basic)\s+(?={_VALUE}*[\d=]|{_VALUE}{{16}})"
    r"|(?<![A-Za-z0-9])(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token"
    r"|auth[_-]?token|token)[\"']?\s*[:=]\s*[\"']?)"
    rf"({_VALUE}{{4,}})"
)
# Every label but "bearer"/"basic" ends with one of these, then ":" or "=" (maybe after a quote
# and spaces): api_key ends with "key", access_token with "token".
_LABEL_ENDS = ("authorization", "password", "passwd", "pwd", "secret", "key", "token")
_LEAVES = frozenset({int, float, bool, type(None)})  # nothing to mask in these
_SENSITIVE_KEYS = re.compile(
    r"(?i)(password|passwd|secret|api[_-]?key|token|authorization|credential|private[_-]?key)"
)
# Usage counters are not secrets: max_tokens, token_count, promptTokenCount, input_tokens.
_COUNTED = r"(?:count|limit|usage|used|budget|total|details)"
_TOKEN_COUNTERS = re.compile(
    r"(?i)(?:(?:max|min|input|output|prompt|completion|total|cached?|read|creation|candidates"
    rf"|thoughts|reasoning|content|num|used)[_-]?)+tokens?(?:[_-]?{_COUNTED})?"
    rf"|tokens?[_-]?{_COUNTED}"
)


class Redactor:
    """Masks credential-shaped text and any exact secret value it was told about."""

    def __init__(self, known_secrets: Iterable[str] = ()) -> None:
        self._known: list[str] = []
        self.generation = 0  # grows with every secret added: what masked text before may not
        for secret in known_secrets:
            self.add_secret(secret)

    def add_secret(self, secret: str) -> None:
        """Always mask this exact value (a configured token, say), longest first."""
        if len(secret) >= 6 and secret not in self._known:
            self._known.append(secret)
            self._known.sort(key=len, reverse=True)
            self.generation += 1

    def text(self, value: str) -> str:
        """Mask secrets inside a string: raw, and every run that decodes to one (base64,
        hex, URL-encoded, one inside another)."""
        value = self._raw(value)
        return self._encoded(value) if may_hold_encoding(value) else value

    def carries(self, value: str) -> bool:
        """Whether `value` holds a secret in any form this redactor would mask."""
        return self.text(value) != value

    def _raw(self, value: str) -> str:
        for secret in self._known:
            if secret in value:
                value = value.replace(secret, MASK)
        for pattern in _shapes_in(value):
            value = pattern.sub(MASK, value)
        if _may_be_labelled(value):
            value = _LABELLED.sub(lambda m: m.group(1) + MASK, value)
        return value

    def _encoded(self, value: str) -> str:
        """`value` with each encoded run that decodes to a secret masked whole."""

        def run(decoded: list[str], match: re.Match[str]) -> str:
            hidden = any(self._hides(text, ENCODING_DEPTH - 1) for text in decoded)
            return MASK if hidden else match.group()

        value = BASE64_RUN.sub(lambda m: run(base64_texts(m.group()), m), value)
        value = HEX_RUN.sub(lambda m: run(hex_texts(m.group()), m), value)
        if "%" in value:
            value = URL_RUN.sub(lambda m: run([unquote_plus(m.group())], m), value)
        return value

    def _hides(self, text: str, depth: int) -> bool:
        """Whether decoded `text`, or what it decodes to in turn, holds a raw secret."""
        if self._raw(text) != text:
            return True
        return depth > 0 and any(self._hides(d, depth - 1) for d in decodings(text))

    def value(self, value: Any) -> Any:
        """Mask secrets anywhere inside JSON-like data; values under secret-named keys go whole."""
        kind = type(value)  # exact types first: the common cases, without isinstance chains
        if kind is str:
            return self.text(value)
        if kind in _LEAVES:
            return value
        if kind is dict or isinstance(value, dict):
            return self._mapping(value) if value else {}
        if kind is list or kind is tuple or isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value

    def _mapping(self, value: dict[Any, Any]) -> dict[str, Any]:
        masked = {}
        for k, v in value.items():
            key = k if type(k) is str else str(k)
            masked[key] = MASK if _is_sensitive(key) and v else self.value(v)
        return masked


def holds_credential(text: str) -> bool:
    """Whether `text` carries a well-known credential shape (a provider's API key, a bot
    token, a private key, ...): what a message must not bring into the chat history."""
    return any(pattern.search(text) is not None for pattern in _shapes_in(text))


def _shapes_in(text: str) -> list[re.Pattern[str]]:
    """The shape patterns that could match `text` (in order): those whose mark it holds."""
    found = [pattern for mark, pattern in _MARKED if mark in text]
    return list(dict.fromkeys(found)) if len(found) > 1 else found


def _may_be_labelled(text: str) -> bool:
    """False only for text _LABELLED cannot match (a few substring searches, where the
    case-insensitive scan costs about 75 µs a kilobyte)."""
    if not text.isascii():
        return True  # case-insensitive matching folds some non-ASCII letters ("ſ" ~ "s")
    lowered = text.lower()
    if "bearer" in lowered or "basic" in lowered:
        return True
    if "=" not in text and ":" not in text:
        return False
    return any(_assigned(lowered, word) for word in _LABEL_ENDS)


def _assigned(text: str, word: str) -> bool:
    """Whether `word` occurs followed by ':' or '=' (after an optional quote and spaces)."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if text[end : end + 1] in ('"', "'"):
            end += 1
        while end < len(text) and text[end].isspace():
            end += 1
        if text[end : end + 1] in (":", "="):
            return True
        at = text.find(word, at + 1)
    return False


@lru_cache(maxsize=4096)  # keys repeat endlessly across receipts
def _is_sensitive(key: str) -> bool:
    """A key whose value is a secret: password, api_key, auth_token; not max_tokens."""
    return bool(_SENSITIVE_KEYS.search(key)) and not _TOKEN_COUNTERS.fullmatch(key)
