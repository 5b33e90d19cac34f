"""docs/receipts.md, written from the receipt kinds' registry: every kind by its role, what it
records, how the receipt page names it and its verdict; then the digest's sections.
`python -m core.receipts.reference` prints it; a test fails when the checked-in file differs."""

from __future__ import annotations

import sys

from core.receipts.kinds import KindRegistry, ReceiptKind, Role, Section
from core.receipts.registry import KINDS

INTRO = """\
# Receipt kinds

<!-- Written by `python -m core.receipts.reference > docs/receipts.md` from
core/receipts/registry.py; edit the kinds there, not this file. -->

Every receipt Lancelot writes has a kind, its `action_type`, declared once in
`core/receipts/registry.py`. Its role is the part it plays in its request's story on the
receipt page; "on the page" is how its line reads there, `{subject}` standing for what it was
about (the command, the action's name, what was undone). A kind this version does not know (a
ledger outlives the code that wrote it) reads as a step.
"""

# What each role's table is about, and how its kinds show on the receipt page.
HEADINGS = {
    Role.REQUEST: "Requests: each starts a story (a message's line is its text)",
    Role.STEP: "Steps: each a line of its own in its request's story",
    Role.ASK: "Asks: the owner asked to decide, one line with the decision that answers it",
    Role.DECISION: "Decisions: the Soul's (a line), or the owner's answer to an ask (a verdict)",
    Role.EFFECT: "Effects: a governed tool ran; its exit code is how the request ended",
    Role.UNDO: "Undos: shown in the story of the request that made the change",
    Role.ANSWER: "Answers: the card's title is how the request ended; no line of its own",
    Role.PRESS: "Presses: the owner's buttons; never a request or a line of their own",
    Role.HIDDEN: "Hidden: folded into other lines; never a line of its own",
}

# What each digest section counts.
SECTIONS = {
    Section.JOBS: "the scheduled runs' outcomes",
    Section.HEALTH: "health's turns",
    Section.USAGE: "the model calls' tokens and cost",
}

# The roles whose kinds have a line of their own on the page (an ask's is the approval's).
LINED = frozenset({Role.REQUEST, Role.STEP, Role.DECISION, Role.EFFECT, Role.UNDO})


def _on_the_page(kind: ReceiptKind) -> str:
    """How the page names a receipt of `kind`: its line, or where it shows instead."""
    if kind.role is Role.ASK or kind.verdict is not None:
        return "in the approval's line"
    if kind.role not in LINED:
        return "no line"
    return f"`{kind.shown_as}`"


def _row(kind: ReceiptKind) -> str:
    """One kind as a table row; a decision's row ends with its verdict."""
    cells = [f"`{kind.name}`", kind.about, _on_the_page(kind)]
    if kind.role is Role.DECISION:
        cells.append(kind.verdict or "")
    return "| " + " | ".join(cells) + " |"


def _role_table(kinds: KindRegistry, role: Role) -> str:
    """The kinds that play `role`, in declaration order, under the role's heading."""
    head = ["kind", "what it records", "on the page"]
    if role is Role.DECISION:
        head.append("verdict")
    lines = [f"## {HEADINGS[role]}", "", "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    lines += [_row(kinds.get(name)) for name in kinds.having(role)]
    return "\n".join(lines) + "\n"


def _sections_table(kinds: KindRegistry) -> str:
    """Which kinds each digest section counts (besides failures and roles)."""
    lines = ["## The digest's sections", "", "| section | counts | kinds |", "|---|---|---|"]
    for section in Section:
        names = ", ".join(f"`{name}`" for name in kinds.in_section(section))
        lines.append(f"| {section} | {SECTIONS[section]} | {names} |")
    return "\n".join(lines) + "\n"


def render_reference(kinds: KindRegistry = KINDS) -> str:
    """docs/receipts.md as `kinds` declare it now: one table per role, then the sections."""
    parts = [INTRO, *(_role_table(kinds, role) for role in Role if kinds.having(role))]
    parts.append(_sections_table(kinds))
    return "\n".join(parts)


if __name__ == "__main__":
    sys.stdout.write(render_reference())
