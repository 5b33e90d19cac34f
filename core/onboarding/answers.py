"""Reading the owner's typed answers: a name, a timezone, a provider; and keys that must not be
typed at all."""

from __future__ import annotations

import re
import zoneinfo
from functools import cache

from core.receipts.redaction import MASK, Redactor, holds_credential

MAX_NAME = 40
_LONE_TOKEN = re.compile(r"[A-Za-z0-9_\-.]{28,}")  # one long unbroken word: a pasted key


def looks_like_key(text: str) -> bool:
    """A credential shape, a labelled secret ("OPENAI_API_KEY=..."), or a single long
    random-looking word with letters and digits (what a pasted key is)."""
    words = text.strip()
    if holds_credential(words) or MASK in Redactor().text(words):
        return True
    return bool(
        _LONE_TOKEN.fullmatch(words)
        and re.search(r"\d", words)
        and re.search(r"[A-Za-z]", words)
        and "/" not in words
    )


def read_name(text: str) -> str | None:
    """The name to call the owner, or None when `text` cannot be one."""
    name = " ".join(text.split()).strip(" .!")
    if not name or len(name) > MAX_NAME or name.startswith("/"):
        return None
    if any(ch in name for ch in "<>{}[]\\|`"):
        return None
    return name


@cache
def _zones() -> dict[str, str]:
    """Every IANA zone by its lower-case name, and by its city alone ("paris", "new york")."""
    known: dict[str, str] = {}
    for zone in sorted(zoneinfo.available_timezones()):
        known[zone.lower()] = zone
        if "/" in zone and not zone.startswith("Etc/"):
            city = zone.rsplit("/", 1)[1].replace("_", " ").lower()
            known.setdefault(city, zone)
    return known


def read_timezone(text: str) -> str | None:
    """An IANA timezone name for `text` ("Europe/Paris", "paris", "UTC"), or None."""
    words = " ".join(text.split()).strip(" .!")
    if not words:
        return None
    zone = _zones().get(words.lower()) or _zones().get(words.replace(" ", "_").lower())
    if zone is None:
        return None
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None
    return zone
