"""Reading fenced untrusted text (core/security/untrusted.py) as a test checks it."""

from __future__ import annotations


def fenced_body(output: str) -> str:
    """The text between the two fence lines (a fence tag alone on a line, twice)."""
    lines = output.split("\n")
    tag = next(line for line in lines if line.startswith("<<data-") and line.endswith(">>"))
    start = lines.index(tag)
    end = len(lines) - 1 - lines[::-1].index(tag)
    assert end > start, "the fence is not closed"
    return "\n".join(lines[start + 1 : end])


def header_of(output: str) -> str:
    """What stands before the fence: Lancelot's own words about the data."""
    return output.split("\n<<data-")[0]
