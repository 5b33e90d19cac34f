"""The Memory facade: the one API the agent, the commands and the CLI use."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from core.clock import SystemWallClock, WallClock
from core.memory.blocks import Block
from core.memory.commits import Commits
from core.memory.context import compile_context
from core.memory.edits import Edit, EditParts
from core.memory.experiences import Experiences
from core.memory.export import ReviewRow, export_jsonl, review_row
from core.memory.items import Items
from core.memory.maintenance import Chores, cleanup
from core.memory.material import Sources, gather
from core.memory.model import (
    ROLES,
    CleanupReport,
    Commit,
    Committed,
    CompiledContext,
    Counts,
    Experience,
    Item,
    Provenance,
    Quarantined,
    QuarantinedEdit,
    Remembered,
    Role,
    Tier,
    Turn,
    WorkingTask,
)
from core.memory.quarantine import Quarantine
from core.memory.screening import MAX_ITEM_CHARS, Screening
from core.memory.store import MemoryStore
from core.memory.turns import Conversations, insert_query
from core.memory.working import Tasks, end_query
from core.receipts.base import ReceiptStore
from core.receipts.redaction import Redactor
from core.security.sanitizer import Sanitizer


class Memory:
    """Tiered memory over an open MemoryStore: conversations, working tasks, core blocks,
    episodic and archival facts, task experiences; every fact edit a commit (or held in
    quarantine), each commit with a receipt."""

    def __init__(
        self,
        store: MemoryStore,
        receipts: ReceiptStore,
        *,
        redactor: Redactor | None = None,
        sanitizer: Sanitizer | None = None,
        clock: WallClock | None = None,
        max_item_chars: int = MAX_ITEM_CHARS,
    ) -> None:
        self.store = store
        self.receipts = receipts
        self._clock = clock or SystemWallClock()
        self._redactor = redactor or Redactor()
        self.turns = Conversations(store)
        self.items = Items(store)
        self.commits = Commits(store, receipts)
        self.quarantine = Quarantine(store, self.commits, receipts)
        self.tasks = Tasks(store)
        self.experiences = Experiences(store)
        self._screening = Screening(self._redactor, sanitizer or Sanitizer(), max_item_chars)
        self._sources = Sources(store, self.turns)
        self._parts = EditParts(
            store, self.items, self.commits, self.quarantine, self._screening, self._clock.time
        )

    # Conversations

    async def record_turn(
        self, chat: str, role: Role, text: str, *, receipt_id: str | None = None
    ) -> None:
        """Add a turn to the chat's current conversation (secrets masked, long text cut)."""
        if role not in ROLES:
            raise ValueError(f"a turn's role is one of {', '.join(ROLES)}, not {role!r}")
        masked = self._redactor.text(text)
        await self.turns.record(chat, role, masked, receipt_id, self._clock.time())

    async def conversation(self, chat: str, limit: int = 20) -> list[Turn]:
        """The last `limit` turns of the chat's current conversation, oldest first."""
        return await self.turns.recent(chat, limit)

    async def new_conversation(self, chat: str) -> None:
        """/new: earlier turns stop reaching the model; they stay searchable."""
        await self.turns.new_conversation(chat, self._clock.time())

    async def search_conversations(self, query: str, limit: int = 10) -> list[Turn]:
        """Turns of every conversation holding all the words of `query`."""
        return await self.turns.search(query, limit)

    # Facts and core blocks

    def begin(self, provenance: Provenance, reason: str) -> Edit:
        """Start an edit: stage insert/update/delete/rethink, then finish() (or use it as an
        async context manager)."""
        return Edit(self._parts, provenance, reason)

    async def remember(
        self,
        text: str,
        *,
        provenance: Provenance,
        chat: str | None = None,
        tier: Literal["archival", "episodic"] = "archival",
        source: str | None = None,
    ) -> Remembered:
        """Keep a fact: archival (for good) or episodic (this chat's conversation). Committed,
        or Quarantined when the owner must approve it; MemoryRefused for a text too long, empty
        or nothing but a secret."""
        kind = Tier(tier)
        at = self._clock.time()
        conversation = await self.turns.current(chat, at) if chat is not None else None
        edit = self.begin(provenance, "remember")
        item_id = edit.insert(text, tier=kind, chat=chat, conversation=conversation, source=source)
        outcome = await edit.finish()
        return Committed(item_id, outcome.id) if isinstance(outcome, Commit) else outcome

    async def set_block(
        self, block: Block | str, text: str, *, provenance: Provenance
    ) -> Remembered:
        """Rewrite a core block. Held for the owner unless the system writes it."""
        edit = self.begin(provenance, f"rethink {block}")
        edit.rethink(str(block), text)
        outcome = await edit.finish()
        if isinstance(outcome, Commit):
            return Committed(outcome.changes[0].item_id, outcome.id)
        return outcome

    async def blocks(self) -> dict[Block, Item]:
        """The core blocks that have text."""
        return await self.items.blocks()

    async def item(self, item_id: str) -> Item | None:
        """One item by id."""
        return await self.items.get(item_id)

    async def recall(self, query: str, limit: int = 5) -> list[Item]:
        """Archival and episodic facts matching any word of `query`, most relevant and
        recently used first."""
        tiers = (Tier.ARCHIVAL, Tier.EPISODIC)
        found = await self.items.search(query, limit, self._clock.time(), tiers)
        return [item for item, _ in found]

    async def forget(self, item_id: str, *, provenance: Provenance) -> Commit | Quarantined:
        """Remove an item (Undo of its commit brings it back). A tool's request, or one for a
        core block, waits in quarantine."""
        edit = self.begin(provenance, "forget")
        await edit.delete(item_id)
        return await edit.finish()

    # Commits and quarantine

    async def undo_commit(
        self, commit_id: str, *, provenance: Provenance = Provenance.OWNER
    ) -> Commit:
        """Restore what a commit changed, as a new commit; UndoRefused when a later commit
        changed the same items (undo that first) or it was undone already."""
        return await self.commits.undo(commit_id, provenance, self._clock.time())

    async def recent_commits(self, limit: int = 10) -> list[Commit]:
        """The newest commits first, with their changes."""
        return await self.commits.recent(limit)

    async def commit(self, commit_id: str) -> Commit | None:
        """One commit with its changes."""
        return await self.commits.get(commit_id)

    async def quarantined(self, limit: int = 20) -> list[QuarantinedEdit]:
        """Edits waiting for the owner, oldest first, with the exact texts."""
        return await self.quarantine.pending(limit)

    async def held(self, quarantine_id: str) -> QuarantinedEdit | None:
        """One edit waiting for the owner (None once decided, or for an unknown id)."""
        return await self.quarantine.get(quarantine_id)

    async def approve(self, quarantine_id: str) -> Commit:
        """Apply a held edit; MemoryRefused when it is not waiting."""
        return await self.quarantine.approve(quarantine_id, self._clock.time())

    async def reject(self, quarantine_id: str) -> QuarantinedEdit:
        """Drop a held edit; MemoryRefused when it is not waiting."""
        return await self.quarantine.reject(quarantine_id, self._clock.time())

    # Working memory and experiences

    async def set_task(
        self,
        chat: str,
        request: str,
        *,
        plan: Sequence[str] = (),
        steps: Sequence[str] = (),
        approval_id: str | None = None,
        quest_id: str | None = None,
    ) -> WorkingTask:
        """Start or update the chat's current task."""
        r = self._redactor.text
        return await self.tasks.set(
            chat, r(request), [r(p) for p in plan], [r(s) for s in steps], approval_id,
            quest_id, self._clock.time(),
        )  # fmt: skip

    async def task(self, chat: str) -> WorkingTask | None:
        """The chat's current task."""
        return await self.tasks.get(chat)

    async def task_waiting_on(self, approval_id: str) -> WorkingTask | None:
        """The task waiting on this approval, to resume it (after a restart too)."""
        return await self.tasks.waiting_on(approval_id)

    async def end_turn(
        self, chat: str, said: Sequence[tuple[Role, str]], *, label: str = ""
    ) -> None:
        """The chat's request is answered: its task ends and what was said after it is
        recorded (secrets masked), in one commit, with `label` (STRANGERS: the request read
        a stranger's text, which may have shaped these words)."""
        at = self._clock.time()
        conversation = await self.turns.current(chat, at)
        for role, _ in said:
            if role not in ROLES:
                raise ValueError(f"a turn's role is one of {', '.join(ROLES)}, not {role!r}")
        queries = [end_query(chat)] + [
            insert_query(chat, conversation, role, self._redactor.text(text), None, at, label)
            for role, text in said
        ]
        await self.store.write_many(queries)

    async def finish_task(self, chat: str) -> WorkingTask | None:
        """End the chat's current task; the task as it ended."""
        return await self.tasks.finish(chat)

    async def record_experience(
        self,
        request: str,
        plan: Sequence[str],
        gaps: Sequence[str],
        actions: Sequence[str],
        outcome: str,
        duration_ms: float,
    ) -> Experience:
        """Keep what was done for a request and how it went (secrets masked)."""
        r = self._redactor.text
        return await self.experiences.record(
            r(request), [r(p) for p in plan], [r(g) for g in gaps], [r(a) for a in actions],
            r(outcome), duration_ms, self._clock.time(),
        )  # fmt: skip

    async def similar_experiences(self, request: str, limit: int = 3) -> list[Experience]:
        """Experiences of requests that read like this one, best first."""
        found = await self.experiences.similar(request, limit, self._clock.time())
        return [x for x, _ in found]

    # The context

    async def context(self, chat: str, request: str, budget_tokens: int) -> CompiledContext:
        """What memory puts before the model for `request` in `chat` (context.py says how);
        the facts and experiences that went in count as used now."""
        now = self._clock.time()
        material = await gather(self._sources, chat, request, budget_tokens, now)
        compiled = compile_context(material, budget_tokens)
        taken = set(compiled.item_ids)
        used = [f.id for f in material.facts] + [x.id for x in material.experiences]
        self.items.touch((i for i in used if i in taken), now)
        return compiled

    # Maintenance and the owner's view

    async def cleanup(self, now: float) -> CleanupReport:
        """The daily pass (maintenance.py): expire tasks, summarise, promote; with a receipt."""
        return await cleanup(Chores(self.store, self.tasks, self.receipts, self.begin), now)

    async def export_jsonl(self, path: Path) -> int:
        """Write the whole memory to `path` as JSON lines (owner-only file); how many lines."""
        return await export_jsonl(self.store.path, path)

    async def review(self, limit: int = 20) -> list[ReviewRow]:
        """The newest commits as rows for the terminal."""
        return [review_row(commit) for commit in await self.commits.recent(limit)]

    async def counts(self) -> Counts:
        """How much each tier holds, what waits in quarantine, how many commits."""
        tiers = await self.items.count()
        row = await self.store.read_one(
            "SELECT (SELECT COUNT(*) FROM memory_turns), (SELECT COUNT(*) FROM memory_commits)"
        )
        turns, commits = row if row else (0, 0)
        return Counts(
            core=tiers[Tier.CORE],
            working=await self.tasks.count(),
            turns=turns,
            episodic=tiers[Tier.EPISODIC],
            archival=tiers[Tier.ARCHIVAL],
            experiences=await self.experiences.count(),
            quarantined=await self.quarantine.count(),
            commits=commits,
        )
