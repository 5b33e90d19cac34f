"""What a value may be an encoding of: its URL-decoding, and the text of every base64
(standard or URL-safe, padded or not, at any offset) or hex run in it. The redactor reads
each form, so a secret sent or stored encoded is found as surely as a raw one."""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import unquote_plus

# Runs long enough to hide a short key (16 base64 characters are 12 bytes), found anywhere.
BASE64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{16,}={0,2}")
HEX_RUN = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")
URL_RUN = re.compile(r"\S*%[0-9A-Fa-f]{2}\S*")
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")


def may_hold_encoding(value: str) -> bool:
    """False only for a value with no run any decoding could start from (most text)."""
    return "%" in value or BASE64_RUN.search(value) is not None


def decodings(value: str) -> list[str]:
    """Every text `value` may be an encoding of, one level down."""
    found: list[str] = []
    unquoted = unquote_plus(value)
    if unquoted != value:
        found.append(unquoted)
    for run in BASE64_RUN.findall(value):
        found.extend(base64_texts(run))
    for run in HEX_RUN.findall(value):
        found.extend(hex_texts(run))
    return found


def base64_texts(run: str) -> list[str]:
    """The texts a base64-looking run decodes to, from each of its first four offsets (it
    may start with a character or three of its neighbours)."""
    if run.islower() or run.isupper():  # 16 random base64 characters of one case: 1 in 10^4
        return []
    found: list[str] = []
    for shift in range(4):
        body = run[shift:].rstrip("=")
        padded = body + "=" * (-len(body) % 4)
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                found.extend(_as_text(decode(padded)))
            except (binascii.Error, ValueError):
                continue
    return found


def hex_texts(run: str) -> list[str]:
    """The text a hex run decodes to, if it is text."""
    return _as_text(binascii.unhexlify(run[: len(run) // 2 * 2]))


def _as_text(raw: bytes) -> list[str]:
    """`raw` as text when nearly all of it is printable (a decoded secret is); else nothing.
    Its head decides first: a binary blob is known by its first few hundred bytes."""
    text = raw.decode("utf-8", errors="replace")
    for part in (text[:256], text):
        if not part or len(_UNPRINTABLE.findall(part)) > 0.1 * len(part):
            return []
    return [text]
