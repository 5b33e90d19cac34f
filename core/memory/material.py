"""What the context compiler is given: everything memory holds that may matter to one request
in one chat, each kind best first."""

from __future__ import annotations

from dataclasses import dataclass

from core.memory.context import Material
from core.memory.experiences import Experiences
from core.memory.items import Items
from core.memory.model import Experience
from core.memory.search import match_expression
from core.memory.turns import Conversations
from core.memory.working import Tasks

RECENT_TURNS = 200  # the most the context reads back; the budget decides how many go in
FACT_CANDIDATES = 20
SIMILAR_TASKS = 3


@dataclass(frozen=True, slots=True)
class Sources:
    """The tables the material comes from."""

    turns: Conversations
    items: Items
    tasks: Tasks
    experiences: Experiences


async def gather(sources: Sources, chat: str, request: str, now: float) -> Material:
    """The core blocks, the chat's task, its conversation (summary and the turns not yet
    summarised, the request itself left out), this conversation's facts, then archival facts
    and experiences matching the request."""
    conversation = await sources.turns.current(chat, now)
    turns = await sources.turns.recent(chat, RECENT_TURNS, unsummarised=True)
    if turns and turns[-1].role == "owner" and turns[-1].text == request:
        turns = turns[:-1]  # the request itself goes to the model as the new message
    facts = [item for item, _ in await sources.items.episodic(chat, conversation)]
    experiences: list[Experience] = []
    if (expression := match_expression(request)) is not None:
        found = await sources.items.search(expression, FACT_CANDIDATES, now)
        facts += [item for item, _ in found]
        similar = await sources.experiences.similar(expression, SIMILAR_TASKS, now)
        experiences = [x for x, _ in similar]
    summary = await sources.turns.summary(chat)
    return Material(
        blocks=await sources.items.blocks(),
        task=await sources.tasks.get(chat),
        summary=(f"s{summary[0]}", summary[1]) if summary else None,
        turns=turns,
        facts=facts,
        experiences=experiences,
    )
