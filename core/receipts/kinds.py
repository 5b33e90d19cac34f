"""What a receipt kind is: its name, its role in a request's story, and how it reads.

Every `action_type` Lancelot writes is declared once, in core/receipts/registry.py; the
receipt page and the digest read these descriptors (a role, a section), never lists of
names of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

NAME = re.compile(r"[a-z][a-z0-9_]*\Z")  # also what makes a name safe to put in SQL


class Role(StrEnum):
    """The part a receipt of this kind plays in the story of its request."""

    REQUEST = "request"  # starts a request: a message, a scheduled run (a story's root)
    STEP = "step"  # a line of its own in its request's story
    ASK = "ask"  # asks the owner to decide: one line with the decision that answers it
    DECISION = "decision"  # the Soul's (a line) or, with a verdict, the owner's on an ask
    EFFECT = "effect"  # a governed tool ran: its exit code is how the request ended
    UNDO = "undo"  # an applied change taken back, or refused: shown in the change's request
    ANSWER = "answer"  # the card a request was answered with: its title is how it ended
    PRESS = "press"  # an owner's button press: never a request of its own
    HIDDEN = "hidden"  # folded into other lines; never a line of its own


class Section(StrEnum):
    """The digest section that counts receipts of this kind (besides failures and roles)."""

    JOBS = "jobs"  # a scheduled run's outcome
    HEALTH = "health"  # a health transition (degraded, recovered)
    USAGE = "usage"  # a model call's tokens and cost


class KindError(ValueError):
    """A registry that cannot stand: a name declared twice, or not a plain lowercase word."""


@dataclass(frozen=True, slots=True)
class ReceiptKind:
    """One `action_type`: its role, what it records, and how the page's line reads.

    `line` names the receipt on the page, `{subject}` standing for what it was about (the
    command, the action's name, what was undone); `verdict` is the word for the owner's
    answer when the kind is the decision on an approval."""

    name: str
    role: Role
    about: str
    line: str = ""
    verdict: str | None = None
    section: Section | None = None

    @property
    def shown_as(self) -> str:
        """The line template: `line`, or the name in words followed by the subject."""
        return self.line or f"{self.name.replace('_', ' ')}: {{subject}}"


class KindRegistry:
    """Receipt kinds by name: frozen once built, checked as it is built."""

    def __init__(self, kinds: Iterable[ReceiptKind]) -> None:
        found: dict[str, ReceiptKind] = {}
        for kind in kinds:
            name = str(kind.name)
            if not NAME.match(name):
                raise KindError(f"receipt kind {name!r} is not a lowercase word (a-z, 0-9, _)")
            if name in found:
                raise KindError(f"receipt kind {name!r} is declared twice")
            if kind.verdict is not None and kind.role is not Role.DECISION:
                raise KindError(f"receipt kind {name!r}: only a decision carries a verdict")
            found[name] = kind
        self._kinds: Mapping[str, ReceiptKind] = found
        self.names = frozenset(found)

    def get(self, name: str) -> ReceiptKind:
        """The kind of `name`; one this version does not know (a ledger outlives the code
        that wrote it) is an ordinary step."""
        return self._kinds.get(name) or ReceiptKind(name, Role.STEP, "not registered")

    def having(self, role: Role) -> tuple[str, ...]:
        """The names of the kinds that play `role`, in declaration order."""
        return tuple(name for name, kind in self._kinds.items() if kind.role is role)

    def in_section(self, section: Section) -> tuple[str, ...]:
        """The names of the kinds the digest's `section` counts, in declaration order."""
        return tuple(name for name, kind in self._kinds.items() if kind.section is section)

    def unregistered(self, names: Iterable[str]) -> list[str]:
        """Those of `names` that are not declared here, sorted."""
        return sorted({name for name in names if name not in self._kinds})

    def plus(self, *kinds: ReceiptKind) -> KindRegistry:
        """A registry with these kinds as well (this one is left as it is)."""
        return KindRegistry((*self._kinds.values(), *kinds))
