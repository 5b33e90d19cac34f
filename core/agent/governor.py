"""The response governor: no simulated progress when nothing is running."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Phrases that promise work in the background. Lancelot has none running after it answers.
_PROGRESS = re.compile(
    r"(I'?m (still )?working on (it|this|that)|I am (still )?working on (it|this|that)|"
    r"I'?ll get back to you|I will get back to you|I'?ll (let you know|update you|report back|"
    r"follow up)|I will (let you know|update you|report back|follow up)|give me a (moment|"
    r"minute|second)|stand by|hang tight|(still |currently )?in progress|working on it now|"
    r"bear with me|I'?m on it)",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
NOTE = "Nothing is running in the background: this reply is everything I did."


@dataclass(frozen=True, slots=True)
class Governed:
    """The text after the governor and the phrases it removed."""

    text: str
    blocked: tuple[str, ...]


def govern(text: str, *, job_running: bool) -> Governed:
    """Drop sentences that claim ongoing work unless a job really runs."""
    if job_running:
        return Governed(text, ())
    blocked = tuple(m.group(0) for m in _PROGRESS.finditer(text))
    if not blocked:
        return Governed(text, ())
    lines = []
    for line in text.split("\n"):
        sentences = _SENTENCE_END.split(line)
        kept = [s for s in sentences if not _PROGRESS.search(s)]
        if kept or not line.strip():  # a line made only of promises goes; blank lines stay
            lines.append(" ".join(kept))
    cleaned = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return Governed(cleaned, blocked)
