"""Safe file names for what the owner sends: whatever the platform says a file is called,
what lands in the inbox is one plain name (no path, no '..', no odd characters)."""

from __future__ import annotations

import mimetypes
import re
import time
import unicodedata

from core.events import FileKind, FileOffer

MAX_STEM = 80
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_DEFAULT_EXT = {
    FileKind.PHOTO: ".jpg",
    FileKind.VOICE: ".ogg",
    FileKind.VIDEO: ".mp4",
    FileKind.AUDIO: ".mp3",
    FileKind.DOCUMENT: ".bin",
}
# mimetypes' first guesses that are not what anyone calls these files
_PREFERRED_EXT = {"image/jpeg": ".jpg", "audio/ogg": ".ogg", "audio/mpeg": ".mp3"}


def safe_name(offer: FileOffer, now: float | None = None) -> str:
    """A name for `offer` in the inbox: the sender's name made plain, or kind and time."""
    stem, ext = _split(_last_component(offer.name))
    stem = _plain(stem)[:MAX_STEM].strip("._-")
    ext = _plain(ext)[:12].strip("_-")
    if not stem:  # nameless (a photo, a voice note): kind and time, the type's extension
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
        return f"{offer.kind.value}-{stamp}{ext if len(ext) > 1 else _extension(offer)}"
    return stem + (ext if len(ext) > 1 else "")


def _last_component(name: str) -> str:
    """Only what follows the last separator, of either kind: '../../etc/passwd' -> 'passwd'."""
    return re.split(r"[\\/]", name)[-1]


def _split(name: str) -> tuple[str, str]:
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem.strip("."):
        return name, ""
    return stem, "." + ext


def _plain(text: str) -> str:
    """ASCII letters, digits, dot, dash and underscore; runs of anything else become '_'."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return _UNSAFE.sub("_", folded)


def _extension(offer: FileOffer) -> str:
    mime = offer.mime.split(";")[0].strip().lower()
    if mime in _PREFERRED_EXT:
        return _PREFERRED_EXT[mime]
    guessed = mimetypes.guess_extension(mime) if mime else None
    return guessed or _DEFAULT_EXT[offer.kind]
