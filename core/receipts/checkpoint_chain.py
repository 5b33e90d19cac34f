"""The checkpoints as a chain of their own: numbered from 1, each carrying the link of the one
before it.

A signature shows that a line was not forged, not that a line is gone: without the chain, a
checkpoint removed from the middle, or the file emptied, left nothing to notice. Here the
numbers show a line missing, repeated or moved, and the links a line replaced. Legacy
(unnumbered) lines may only come first; the numbered chain continues from the last of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.receipts.base import CHAIN_START, Checkpoint

# A checkpoint and the line of the file it is on (from 1).
Line = tuple[int, Checkpoint]


def chain_problem(name: str, lines: Sequence[Line], after: Line | None = None) -> str | None:
    """The first break in the chain of `lines` (file `name`, in file order), or None.
    `after`: the line just before them, already checked (an incremental verify's anchor);
    without it the lines must begin the chain."""
    before: Line | None = after
    seen: dict[int, int] = {} if after is None else {after[1].number: after[0]}
    for index, here in enumerate(lines):
        problem = _break(name, here, before, seen, lines, index)
        if problem is not None:
            return problem
        seen.setdefault(here[1].number, here[0])
        before = here
    return None


def _break(
    name: str,
    here: Line,
    before: Line | None,
    seen: dict[int, int],
    lines: Sequence[Line],
    index: int,
) -> str | None:
    """Why the checkpoint on `here` (lines[index]) does not follow `before`, or None."""
    line, checkpoint = here
    if checkpoint.legacy:
        if before is not None and not before[1].legacy:
            return f"{name} line {line}: an unnumbered checkpoint after numbered ones (inserted)"
        return None
    number = checkpoint.number
    expected = before[1].number + 1 if before is not None else 1
    where = f"{name} line {line}: checkpoint #{number}"
    if number == expected:
        return _unlinked(where, checkpoint, before)
    if number < expected:  # the lines so far hold #1 up to #expected - 1, each once
        held = f"line {seen[number]}" if number in seen else "an earlier line"
        return f"{where} is repeated ({held} holds it already)"
    later = (lines[i] for i in range(index + 1, len(lines)))
    moved = next(((at, c.number) for at, c in later if expected <= c.number < number), None)
    if moved is not None:
        return f"{where} is out of order: #{moved[1]} comes after it (line {moved[0]})"
    missing = f"#{expected}" if expected == number - 1 else f"#{expected}..#{number - 1}"
    follows = f"follows #{expected - 1}" if expected > 1 else "comes first"
    return f"{where} {follows}: checkpoint {missing} missing before it (removed)"


def _unlinked(where: str, checkpoint: Checkpoint, before: Line | None) -> str | None:
    """Why a checkpoint numbered right does not carry the link of the one before, or None."""
    link = before[1].link if before is not None else CHAIN_START
    if checkpoint.previous == link:
        return None
    after = f"the checkpoint on line {before[0]}" if before is not None else "the chain's start"
    return f"{where} does not carry the link of {after} (replaced)"
