"""Secrets in disguise: whether a value carries a credential raw, URL-encoded, base64 (plain
or URL-safe, padded or not) or hex. A fooled model sends a key out encoded because plain
masking only knows the raw shape; every outbound argument is read in each form first."""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import unquote_plus

from core.receipts.redaction import MASK, Redactor

# Runs long enough to hide a short key (16 bytes of base64 is 12 of data), found anywhere.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{16,}={0,2}")
_HEX_RUN = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")
MAX_DEPTH = 3  # base64 of the URL-encoding of hex, and no further (the value is bounded)


def carries_secret(value: str, redactor: Redactor) -> bool:
    """Whether `value`, or any text decoded from it, holds a secret `redactor` masks."""
    return _carries(value, redactor, MAX_DEPTH)


def _carries(value: str, redactor: Redactor, depth: int) -> bool:
    if not value:
        return False
    if redactor.text(value) != value:
        return True
    if depth == 0:
        return False
    return any(_carries(decoded, redactor, depth - 1) for decoded in _decodings(value))


def _decodings(value: str) -> list[str]:
    """What `value` may be an encoding of: its URL-decoding and every base64 or hex run in it
    that decodes to text."""
    found: list[str] = []
    unquoted = unquote_plus(value)
    if unquoted != value:
        found.append(unquoted)
    for run in filter(_may_be_base64, _BASE64_RUN.findall(value)):
        for shift in range(4):  # the run may start with a character or three of its neighbours
            found.extend(_from_base64(run[shift:]))
    for run in _HEX_RUN.findall(value):
        found.extend(_as_text(binascii.unhexlify(run)))
    return found


def _may_be_base64(run: str) -> bool:
    """Whether a run can be base64 of text: such runs mix upper and lower case (16 random
    base64 characters all of one case: about 1 in 10,000), where paths and words do not."""
    return not run.islower() and not run.isupper()


def _from_base64(run: str) -> list[str]:
    """The text `run` decodes to as standard or URL-safe base64 (padding restored)."""
    body = run.rstrip("=")
    padded = body + "=" * (-len(body) % 4)
    decoded: list[str] = []
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            decoded.extend(_as_text(decode(padded)))
        except (binascii.Error, ValueError):
            continue
    return decoded


def _as_text(raw: bytes) -> list[str]:
    """`raw` as text when nearly all of it is printable (a decoded secret is); else nothing.
    Its head decides first: a binary blob is known by its first few hundred bytes."""
    text = raw.decode("utf-8", errors="replace")
    for part in (text[:256], text):
        if not part or len(_UNPRINTABLE.findall(part)) > 0.1 * len(part):
            return []
    return [text]


def mask_encoded(value: str, redactor: Redactor) -> str:
    """`value` with every base64, hex or URL-encoded run that decodes to a secret replaced by
    the mask (raw secrets are the redactor's own work)."""
    if not value or (_BASE64_RUN.search(value) is None and "%" not in value):
        return value

    def base64_run(run: re.Match[str]) -> str:
        if not _may_be_base64(run.group()):
            return run.group()
        found = [d for shift in range(4) for d in _from_base64(run.group()[shift:])]
        return MASK if any(_carries(d, redactor, MAX_DEPTH - 1) for d in found) else run.group()

    def hex_run(run: re.Match[str]) -> str:
        found = _as_text(binascii.unhexlify(run.group()))
        return MASK if any(_carries(d, redactor, MAX_DEPTH - 1) for d in found) else run.group()

    value = _HEX_RUN.sub(hex_run, _BASE64_RUN.sub(base64_run, value))
    if "%" in value and carries_secret(unquote_plus(value), redactor):
        value = re.sub(r"\S*%[0-9A-Fa-f]{2}\S*", lambda m: _url_run(m, redactor), value)
    return value


def _url_run(run: re.Match[str], redactor: Redactor) -> str:
    return MASK if carries_secret(unquote_plus(run.group()), redactor) else run.group()
