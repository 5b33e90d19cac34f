"""Helpers for editing soul texts in tests."""

from __future__ import annotations


def edit(text: str, old: str, new: str) -> str:
    """Replace exactly one occurrence, so a test edit cannot silently miss."""
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


def line_of(text: str, fragment: str) -> int:
    """1-based line number of the first line containing `fragment`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)
