"""What the context compiler is given: everything memory holds that may matter to one request
in one chat, each kind best first, read in one trip to the database (one snapshot)."""

from __future__ import annotations

from dataclasses import dataclass

from core.memory import experiences, items, turns, working
from core.memory.context import RECALL_SHARE, Material
from core.memory.model import Experience, Tier
from core.memory.search import words
from core.memory.store import MemoryStore, Query
from core.memory.turns import Conversations

RECENT_TURNS = 200  # the most the context reads back; the budget decides how many go in
FACT_CANDIDATES = 20
SIMILAR_TASKS = 3


@dataclass(frozen=True, slots=True)
class Sources:
    """Where the material comes from."""

    store: MemoryStore
    conversations: Conversations


async def gather(sources: Sources, chat: str, request: str, budget: int, now: float) -> Material:
    """The core blocks, the chat's task, its conversation (summary and the turns not yet
    summarised, as many as `budget` tokens could hold, the request itself left out), this
    conversation's facts, then archival facts and experiences matching the request."""
    conversation = await sources.conversations.current(chat, now)
    terms = words(request)
    first: list[Query] = [
        items.blocks_query(),
        working.task_query(chat),
        turns.summary_query(chat, conversation),
        turns.recent_query(chat, conversation, RECENT_TURNS, unsummarised=True),
        items.episodic_query(chat, conversation),
    ]
    if terms:
        first += [
            items.search_query(terms, FACT_CANDIDATES, (Tier.ARCHIVAL,)),
            experiences.search_query(terms, SIMILAR_TASKS),
        ]
    blocks, task, summary, recent, episodic, *found = await sources.store.read_many(first)
    # The conversation never gets the share held for recall: no need to read further back.
    said = turns.parse_recent(recent, chars=int(budget * 4 * (1 - RECALL_SHARE)))
    if said and said[-1].role == "owner" and said[-1].text == request:
        said = said[:-1]  # the request itself goes to the model as the new message
    facts = [items.item_of(row) for row in episodic]
    similar: list[Experience] = []
    if found:
        facts += [item for item, _ in items.parse_search(found[0], FACT_CANDIDATES, now)]
        similar = [x for x, _ in experiences.parse_search(found[1], SIMILAR_TASKS, now)]
    return Material(
        blocks=items.parse_blocks(blocks),
        task=working.parse_task(task),
        summary=turns.parse_summary(summary),
        turns=said,
        facts=facts,
        experiences=similar,
    )
