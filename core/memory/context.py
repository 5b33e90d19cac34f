"""The context compiler: what memory puts before the model, within a token budget.

Order and shares of the budget: core blocks first (at most 30%, each within its own share),
the current task (at most 15%), relevant facts and similar past tasks (20% held for them),
then the conversation (its summary, then the newest turns, as many as fit), and whatever is
left goes to more facts. Facts and experiences are taken best score first (relevance weighed
by how recently each was used), so the least recently used are the first left out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.memory.blocks import SPECS, Block
from core.memory.model import (
    EXPERIENCES,
    STRANGERS,
    CompiledContext,
    Experience,
    Item,
    Turn,
    WorkingTask,
)

CORE_SHARE, TASK_SHARE, RECALL_SHARE = 0.30, 0.15, 0.20
_CUT = "…"


def tokens(text: str) -> int:
    """The token estimate used throughout: a token per four characters, rounded up."""
    return (len(text) + 3) // 4


def cut(text: str, budget: int) -> str:
    """`text` within `budget` tokens (cut short with an ellipsis)."""
    if tokens(text) <= budget:
        return text
    return text[: max(0, budget * 4 - len(_CUT))] + _CUT if budget > 0 else ""


@dataclass(frozen=True, slots=True)
class Material:
    """Everything the compiler may use for one request, best first within each kind."""

    blocks: dict[Block, Item] = field(default_factory=dict)
    task: WorkingTask | None = None
    summary: tuple[str, str, str] | None = None  # (id, text, label)
    turns: Sequence[Turn] = ()  # oldest first
    facts: Sequence[Item] = ()
    experiences: Sequence[Experience] = ()


class _Builder:
    def __init__(self, budget: int) -> None:
        self.budget = max(0, budget)
        self.used = 0
        self.sections: list[tuple[str, str]] = []
        self.ids: list[str] = []
        self.from_strangers = False  # a turn or summary said after reading strangers went in

    def left(self, share: float = 1.0) -> int:
        return max(0, min(int(self.budget * share), self.budget - self.used))

    def add(self, title: str, text: str, ids: Sequence[str]) -> None:
        if text:
            self.sections.append((title, text))
            self.ids.extend(ids)
            self.used += tokens(title) + tokens(text)


def compile_context(material: Material, budget_tokens: int) -> CompiledContext:
    """The sections for the system message, the ids of what went in, and the tokens used."""
    b = _Builder(budget_tokens)
    _add_blocks(b, material.blocks)
    if material.task is not None:
        b.add(
            "Current task",
            cut(_task_text(material.task), b.left(TASK_SHARE)),
            [f"task:{material.task.chat}"],
        )
    held = b.left(RECALL_SHARE)
    b.budget -= held  # kept for recall while the conversation takes what it needs
    _add_conversation(b, material.summary, material.turns)
    b.budget += held
    _add_recall(b, material.facts, material.experiences)
    return CompiledContext(b.sections, b.ids, b.used, b.from_strangers)


def _add_blocks(b: _Builder, blocks: dict[Block, Item]) -> None:
    total = sum(SPECS[block].max_chars for block in blocks) or 1
    core = b.left(CORE_SHARE)
    for block, item in blocks.items():
        spec = SPECS[block]
        share = min(tokens("x" * spec.max_chars), core * spec.max_chars // total)
        b.add(spec.title, cut(item.text, share - tokens(spec.title)), [item.id])


def _task_text(task: WorkingTask) -> str:
    lines = [f"Request: {task.request}"]
    lines += (
        ["Plan:", *(f"{i}. {step}" for i, step in enumerate(task.plan, 1))] if task.plan else []
    )
    lines += ["Done so far:", *(f"- {s}" for s in task.steps)] if task.steps else []
    if task.approval_id:
        lines.append(f"Waiting for the owner's approval ({task.approval_id}).")
    return "\n".join(lines)


def _add_conversation(
    b: _Builder, summary: tuple[str, str, str] | None, turns: Sequence[Turn]
) -> None:
    title = "Earlier in this conversation (summary)"
    if summary is not None:
        b.add(title, cut(summary[1], b.left(0.5) - tokens(title)), [summary[0]])
        b.from_strangers |= summary[2] == STRANGERS
    room = b.left() - tokens("Recent conversation")
    taken: list[Turn] = []
    lines: list[str] = []
    for turn in reversed(turns):
        line = f"{turn.role}: {turn.text}"
        cost = tokens(line) + 1
        if cost > room:
            if not taken and room > 8:  # the newest turn alone is too long: its start
                taken.append(turn)
                lines.append(cut(line, room - 1))
            break
        taken.append(turn)
        lines.append(line)
        room -= cost
    b.add("Recent conversation", "\n".join(reversed(lines)), [t.id for t in reversed(taken)])
    b.from_strangers |= any(t.label == STRANGERS for t in taken)


def _add_recall(b: _Builder, facts: Sequence[Item], experiences: Sequence[Experience]) -> None:
    for title, entries in (
        ("What you remember", [(f.id, f"- {f.text}") for f in facts]),
        (EXPERIENCES, [(x.id, _experience_line(x)) for x in experiences]),
    ):
        room = b.left() - tokens(title)
        ids, lines = [], []
        for entry_id, line in entries:
            cost = tokens(line) + 1
            if cost <= room:  # else evicted: it ranks below everything taken so far
                ids.append(entry_id)
                lines.append(line)
                room -= cost
        b.add(title, "\n".join(lines), ids)


def _experience_line(x: Experience) -> str:
    plan = f" Plan: {'; '.join(x.plan[:5])}." if x.plan else ""
    ran = "; ".join(x.actions[:5]) or "nothing"
    gaps = f" Missing: {'; '.join(x.gaps[:3])}." if x.gaps else ""
    return f"- Asked: {x.request}{plan} Ran: {ran}. Outcome: {x.outcome}.{gaps}"
