"""An edit of memory: begin, stage changes (insert, update, delete, rethink), finish. Finishing
applies every change in one transaction, or holds the whole edit in quarantine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from core.memory.blocks import check_block_text, spec_of
from core.memory.commits import Commits, Staged, new_id
from core.memory.items import Items
from core.memory.model import Commit, Item, MemoryRefused, Op, Provenance, Quarantined, Tier
from core.memory.quarantine import Quarantine
from core.memory.screening import Screening
from core.memory.store import MemoryStore


@dataclass(frozen=True, slots=True)
class EditParts:
    """What an edit needs from the memory it edits."""

    store: MemoryStore
    items: Items
    commits: Commits
    quarantine: Quarantine
    screening: Screening
    now: Callable[[], float]


class Edit:
    """Changes staged by one author for one reason; nothing is written until `finish`.

    Used as `async with memory.begin(...) as edit:`, it finishes on a clean exit (its outcome
    in `result`) and writes nothing when the block raises."""

    def __init__(self, parts: EditParts, provenance: Provenance, reason: str) -> None:
        self._parts = parts
        self.provenance = provenance
        self.reason = reason
        self._ops: list[Staged] = []
        self.result: Commit | Quarantined | None = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if et is None and self.result is None:
            await self.finish()

    def insert(
        self,
        text: str,
        *,
        tier: Tier = Tier.ARCHIVAL,
        chat: str | None = None,
        conversation: int | None = None,
        source: str | None = None,
    ) -> str:
        """Stage a new episodic or archival item; its id (MemoryRefused for a bad text)."""
        if tier is Tier.CORE:
            raise MemoryRefused("core blocks are written with rethink")
        if tier is Tier.EPISODIC and (chat is None or conversation is None):
            raise MemoryRefused("an episodic item belongs to a chat's conversation")
        item_id = new_id("m")
        admitted = self._parts.screening.admit(text)
        self._stage(Staged(Op.INSERT, item_id, tier, admitted, None, chat, conversation, source))
        return item_id

    def rethink(self, block: str, text: str) -> None:
        """Stage a new text for core block `block` (created if it has none yet)."""
        name = spec_of(block).block.value
        admitted = check_block_text(name, self._parts.screening.admit(text))
        self._stage(Staged(Op.RETHINK, new_id("m"), Tier.CORE, admitted, name))

    async def update(self, item_id: str, text: str) -> None:
        """Stage a new text for an existing item."""
        item = await self._existing(item_id)
        admitted = self._parts.screening.admit(text)
        if item.block:
            check_block_text(item.block, admitted)
        self._stage(Staged(Op.UPDATE, item.id, item.tier, admitted, item.block))

    async def delete(self, item_id: str) -> None:
        """Stage the removal of an item (its text stays in the commit, for Undo)."""
        item = await self._existing(item_id)
        self._stage(Staged(Op.DELETE, item.id, item.tier, item.text, item.block))

    async def _existing(self, item_id: str) -> Item:
        item = await self._parts.items.get(item_id)
        if item is None:
            raise MemoryRefused(f"there is no memory item {item_id}")
        return item

    def _stage(self, op: Staged) -> None:
        if self.result is not None:
            raise MemoryRefused("this memory edit is finished already")
        self._ops.append(op)

    async def finish(self) -> Commit | Quarantined:
        """Apply the staged changes as one commit, or hold them all in quarantine when any
        needs the owner's Approve (screening.hold_reason)."""
        if self.result is not None:
            return self.result
        if not self._ops:
            raise MemoryRefused("nothing to change in memory")
        parts, ops, at = self._parts, tuple(self._ops), self._parts.now()
        why = parts.screening.hold_reason(((o.op, o.tier, o.text) for o in ops), self.provenance)
        if why is not None:
            self.result = await parts.quarantine.hold(ops, self.provenance, self.reason, why, at)
            return self.result
        async with parts.store.transaction() as w:
            commit = await parts.commits.apply(w, ops, self.provenance, self.reason, at)
        parts.commits.announce(commit)
        self.result = commit
        return commit
