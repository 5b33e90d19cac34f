"""A message's way through dispatch: a `Turn` handed down a `Chain` of small `Link`s.

Each link reads the turn and either hands it on (the same, or changed: cleaned text, a
receipt id, notes for the reply), answers it with a card, or ends it with nothing to say.
The order of the links is the precedence, written once where the chain is built
(`core/dispatch/links.py`'s `message_chain`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from core.events import Card, CardKind, Inbound


def reply(title: str, body: str = "", kind: CardKind = CardKind.REPLY) -> Card:
    """A plain reply card."""
    return Card(kind=kind, title=title, body=body)


@dataclass(frozen=True, slots=True)
class Turn:
    """A message on its way: the event, its text as the links so far left it, the inbound
    receipt once written (empty before), the gate's notes, and fields for the reply."""

    event: Inbound
    text: str
    receipt_id: str = ""
    gate_notes: tuple[str, ...] = ()
    notes: tuple[tuple[str, str], ...] = ()
    started: float = field(default_factory=time.perf_counter)

    @property
    def recorded(self) -> bool:
        """Whether the message has its inbound receipt (a reply is then recorded under it)."""
        return bool(self.receipt_id)

    def annotate(self, card: Card) -> Card:
        """The reply with the turn's notes (what was saved and heard) on top."""
        return replace(card, fields=self.notes + card.fields) if self.notes else card


# What a link makes of a turn: hand it on, answer it, or end it silently (None).
Outcome = Turn | Card | None


class Link(Protocol):
    """One step of the chain, readable and testable alone."""

    name: str

    async def __call__(self, turn: Turn) -> Outcome:
        """Hand the turn on, answer it, or end it."""
        ...


class Chain:
    """Runs links in order until one answers or ends the turn."""

    def __init__(self, links: Sequence[Link]) -> None:
        """`links`, in their order of precedence."""
        self.links = tuple(links)

    @property
    def names(self) -> tuple[str, ...]:
        """The links' names, in order: the precedence as one reads it."""
        return tuple(link.name for link in self.links)

    async def run(self, turn: Turn) -> tuple[Turn, Card | None]:
        """The turn as the last link saw it, and the card that answers it (None: nothing
        to send)."""
        for link in self.links:
            outcome = await link(turn)
            if not isinstance(outcome, Turn):
                return turn, outcome
            turn = outcome
        return turn, None
