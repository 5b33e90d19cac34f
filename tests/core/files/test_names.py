"""Safe inbox names: whatever a platform says a file is called, one plain name comes out."""

from __future__ import annotations

import time

import pytest

from core.events import FileKind, FileOffer
from core.files.names import safe_name


@pytest.mark.parametrize(
    ("sent", "saved"),
    [
        ("report.pdf", "report.pdf"),
        ("../../etc/passwd", "passwd"),
        ("..\\..\\Windows\\win.ini", "win.ini"),
        ("/absolute/path/notes.txt", "notes.txt"),
        ("résumé final (2).docx", "resume_final_2.docx"),
        ("a\x00b\nc.txt", "a_b_c.txt"),
        ("....", "document-20260102-030405.bin"),
        ("", "document-20260102-030405.bin"),
        (".bashrc", "bashrc"),
        ("x" * 300 + ".txt", "x" * 80 + ".txt"),
        ("名前.txt", "document-20260102-030405.txt"),
    ],
)
def test_names_are_made_plain(sent: str, saved: str) -> None:
    stamp = time.mktime((2026, 1, 2, 3, 4, 5, 0, 0, -1))  # local time, as names use
    assert safe_name(FileOffer(FileKind.DOCUMENT, "ref", sent), now=stamp) == saved


def test_nameless_files_take_their_kind_and_type() -> None:
    photo = safe_name(FileOffer(FileKind.PHOTO, "ref", "", "image/jpeg"))
    voice = safe_name(FileOffer(FileKind.VOICE, "ref", "", "audio/ogg"))
    assert photo.startswith("photo-")
    assert photo.endswith(".jpg")
    assert voice.startswith("voice-")
    assert voice.endswith(".ogg")
