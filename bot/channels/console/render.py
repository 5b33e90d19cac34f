"""Turns cards into terminal text with numbered buttons."""

from __future__ import annotations

from core.events import Card, CardKind

_MARK = {
    CardKind.APPROVAL: "[approval] ",
    CardKind.ALERT: "[alert] ",
    CardKind.DIGEST: "[digest] ",
    CardKind.NOTICE: "[notice] ",
}


def render_card(card: Card, first_number: int, *, color: bool, edited: bool = False) -> str:
    """The card as text; action buttons are numbered from `first_number`."""
    bold, dim, reset = ("\033[1m", "\033[2m", "\033[0m") if color else ("", "", "")
    prefix = "(updated) " if edited else ""
    lines = [f"{bold}{prefix}{_MARK.get(card.kind, '')}{card.title}{reset}"]
    if card.body:
        lines.append(card.body)
    width = max((len(name) for name, _ in card.fields), default=0)
    lines += [f"  {name.ljust(width)}  {value}" for name, value in card.fields]
    number = first_number
    choices: list[str] = []
    for button in card.buttons:
        if button.url:
            lines.append(f"  {button.label}: {button.url}")
        else:
            choices.append(f"[{number}] {button.label}")
            number += 1
    if choices:
        lines.append("  " + "   ".join(choices) + f"  {dim}(type the number){reset}")
    return "\n".join(lines)
