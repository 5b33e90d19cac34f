"""The daily memory_cleanup: expire stale working tasks, summarise conversations that ended or
outgrew what the context reads back, promote facts repeated across conversations to archival.
Summaries are extractive (no model call): the first and last lines and the owner's requests."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.clock import iso
from core.memory.edits import Edit
from core.memory.model import STRANGERS, CleanupReport, Commit, Provenance, Tier
from core.memory.search import all_words
from core.memory.store import MemoryStore, Row
from core.memory.working import Tasks
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt

CLEANED = "memory_cleanup"
TASK_TTL = 86400.0  # a working task untouched for a day is over
KEEP_TURNS = 100  # the current conversation keeps this many turns whole; older are summarised
SUMMARY_CHARS = 2_000
LINE_CHARS = 160
MAX_REQUESTS = 12
_SPACES = re.compile(r"\W+")


@dataclass(frozen=True, slots=True)
class Chores:
    """What maintenance works with."""

    store: MemoryStore
    tasks: Tasks
    receipts: ReceiptStore
    begin: Callable[[Provenance, str], Edit]


async def cleanup(chores: Chores, now: float) -> CleanupReport:
    """One pass; a memory_cleanup receipt says what it did."""
    expired = await chores.tasks.expire(now - TASK_TTL)
    turns, summaries = 0, 0
    for chat, conversation, count in await _to_summarise(chores.store):
        turns += await _summarise(chores.store, chat, conversation, count, now)
        summaries += 1
    commits = await _promote(chores)
    for index in ("memory_items_fts", "memory_turns_fts", "memory_experiences_fts"):
        # One segment per index: searches read one b-tree instead of several.
        await chores.store.write(f"INSERT INTO {index}({index}) VALUES ('optimize')")
    report = CleanupReport(expired, turns, summaries, len(commits), tuple(commits))
    chores.receipts.append(
        Receipt(
            CLEANED,
            "memory_cleanup",
            inputs={"now": iso(now)},
            outputs={
                "expired_tasks": expired,
                "summarised_turns": turns,
                "summaries": summaries,
                "promoted": report.promoted,
                "commit_ids": list(commits),
            },
        )
    )
    return report


async def _to_summarise(store: MemoryStore) -> list[tuple[str, int, int]]:
    """(chat, conversation, turns to summarise): ended conversations whole, the current one
    beyond its newest KEEP_TURNS."""
    rows = await store.read(
        "SELECT t.chat, t.conversation, COUNT(*), c.conversation FROM memory_turns AS t"
        " JOIN memory_chats AS c ON c.chat = t.chat WHERE t.summarised = 0"
        " GROUP BY t.chat, t.conversation"
    )
    found = []
    for chat, conversation, count, current in rows:
        take = count if conversation < current else count - KEEP_TURNS
        if take > 0:
            found.append((chat, conversation, take))
    return found


async def _summarise(
    store: MemoryStore, chat: str, conversation: int, take: int, now: float
) -> int:
    """Summarise the oldest `take` unsummarised turns of one conversation; how many."""
    async with store.transaction() as w:
        turns = await w.fetch(
            "SELECT n, role, text, at, label FROM memory_turns WHERE chat = ? AND conversation = ?"
            " AND summarised = 0 ORDER BY n LIMIT ?",
            (chat, conversation, take),
        )
        earlier = await w.fetch_one(
            "SELECT text, label FROM memory_summaries WHERE chat = ? AND conversation = ?"
            " ORDER BY n DESC LIMIT 1",
            (chat, conversation),
        )
        text = summary_of([t[:4] for t in turns], earlier[0] if earlier else None)
        # A summary of words a stranger may have shaped is labelled as they were.
        labels = {t[4] for t in turns} | ({earlier[1]} if earlier else set())
        label = STRANGERS if STRANGERS in labels else ""
        await w.insert(
            "INSERT INTO memory_summaries"
            " (chat, conversation, text, first_turn, last_turn, at, label)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (chat, conversation, text, turns[0][0], turns[-1][0], now, label),
        )
        await w.execute(
            "UPDATE memory_turns SET summarised = 1 WHERE chat = ? AND conversation = ?"
            " AND n BETWEEN ? AND ?",
            (chat, conversation, turns[0][0], turns[-1][0]),
        )
    return len(turns)


def summary_of(turns: Sequence[Row], earlier: str | None) -> str:
    """An extractive summary of (n, role, text, at) turns, after an earlier summary's text."""

    def line(text: str) -> str:
        first = next((part for part in text.splitlines() if part.strip()), "").strip()
        return first if len(first) <= LINE_CHARS else first[: LINE_CHARS - 1] + "…"

    asked = [line(text) for _, role, text, _ in turns if role == "owner"]
    if len(asked) > MAX_REQUESTS:  # the first requests and the latest ones
        half = MAX_REQUESTS // 2
        asked = [*asked[:half], "…", *asked[-half:]]
    lines = [
        f"{len(turns)} turns from {iso(turns[0][3])} to {iso(turns[-1][3])}.",
        f"It began: {turns[0][1]}: {line(turns[0][2])}",
        *(["The owner asked:"] + [f"- {a}" for a in asked] if asked else []),
        f"It ended: {turns[-1][1]}: {line(turns[-1][2])}",
    ]
    text = "\n".join(lines)
    if earlier:
        text = f"{earlier}\n{text}"
    if len(text) > SUMMARY_CHARS:  # keep the newest part
        text = "…" + text[-(SUMMARY_CHARS - 1) :]
    return text


def normalised(text: str) -> str:
    """A fact's text compared loosely: lower case, words only."""
    return _SPACES.sub(" ", text.lower()).strip()


async def _promote(chores: Chores) -> list[str]:
    """Make an episodic fact remembered in two or more conversations archival, dropping the
    copies (one commit, so Undo takes it back); the ids of the commits."""
    rows = await chores.store.read(
        "SELECT id, chat, conversation, text FROM memory_items WHERE tier = 'episodic'"
    )
    groups: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        groups[normalised(row[3])].append(row)
    commits = []
    for key, copies in groups.items():
        if len({(chat, conversation) for _, chat, conversation, _ in copies}) < 2:
            continue
        edit = chores.begin(Provenance.SYSTEM, "promote a repeated fact")
        if not await _in_archival(chores.store, key):
            edit.insert(copies[-1][3], tier=Tier.ARCHIVAL, source="promoted from conversations")
        for copy in copies:
            await edit.delete(copy[0])
        outcome = await edit.finish()
        if isinstance(outcome, Commit):
            commits.append(outcome.id)
    return commits


async def _in_archival(store: MemoryStore, key: str) -> bool:
    """Whether an archival item already says this (compared loosely)."""
    expression = all_words(key)
    if expression is None:
        return False
    rows = await store.read(
        "SELECT i.text FROM memory_items_fts JOIN memory_items AS i"
        " ON i.n = memory_items_fts.rowid WHERE memory_items_fts MATCH ?"
        " AND i.tier = 'archival' LIMIT 50",
        (expression,),
    )
    return any(normalised(text) == key for (text,) in rows)
