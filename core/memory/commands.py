"""/memory and /new: what Lancelot remembers, as the owner sees and corrects it.

/memory shows the held edits (Approve or Reject each), the recent commits (Undo each) and
how much each tier holds; `/memory search <words>` finds facts (Forget each); /new starts a
fresh conversation. Every button is a signed, single-use token bound to its card.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from core.commands.registry import CommandContext, CommandRegistry, PressContext, Router
from core.events import Button, Card, CardKind
from core.memory.model import Commit, MemoryRefused, Provenance
from core.memory.service import Memory
from core.security.tokens import ActionTokens

APPROVE, REJECT, UNDO, FORGET = "memory.approve", "memory.reject", "memory.undo", "memory.forget"
SHOWN = 5  # held edits and commits listed on one card
PREVIEW = 160


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"


def _commit_line(commit: Commit) -> str:
    what = "; ".join(f"{c.op} “{_short(c.text)}”" for c in commit.changes[:2])
    more = f" (+{len(commit.changes) - 2})" if len(commit.changes) > 2 else ""
    return f"{commit.reason} by {commit.provenance}: {what}{more}"


class MemoryCommands:
    """The owner's view of memory."""

    def __init__(self, memory: Memory, tokens: ActionTokens) -> None:
        self._memory = memory
        self._tokens = tokens

    def register(self, registry: CommandRegistry) -> None:
        """Add /memory, /new and their buttons."""
        router = Router("memory")
        router.command(
            "memory", "what I remember; search, approve, undo", self.show, usage="[search words]"
        )
        router.command("new", "start a fresh conversation", self.new)
        router.action(APPROVE, self._pressed(self._approve))
        router.action(REJECT, self._pressed(self._reject))
        router.action(UNDO, self._pressed(self._undo))
        router.action(FORGET, self._pressed(self._forget))
        registry.include(router)

    async def new(self, ctx: CommandContext) -> Card:
        """/new: earlier turns stop reaching the model (they stay searchable)."""
        await self._memory.new_conversation(f"{ctx.event.channel}:{ctx.event.chat_id}")
        return Card(
            CardKind.REPLY,
            "New conversation",
            "I start afresh: earlier messages no longer reach the model. What I was asked to "
            "remember stays (see /memory).",
        )

    async def show(self, ctx: CommandContext) -> Card:
        """/memory, or /memory search <words>."""
        words = ctx.args.strip()
        if words.lower().startswith("search"):
            return await self._search(words[len("search") :].strip())
        card = Card(CardKind.REPLY, "Memory", "")
        lines: list[str] = []
        buttons: list[Button] = []
        held = await self._memory.quarantined(limit=SHOWN)
        if held:
            lines.append("Waiting for you:")
        for n, edit in enumerate(held, 1):
            texts = "; ".join(f"“{_short(c.text)}”" for c in edit.changes)
            lines.append(f"H{n}. {texts} ({edit.why})")
            buttons.append(await self._button(f"Approve H{n}", APPROVE, edit.id, card))
            buttons.append(await self._button(f"Reject H{n}", REJECT, edit.id, card))
        commits = await self._memory.recent_commits(limit=SHOWN)
        if commits:
            lines.append("Recent changes:")
        for n, commit in enumerate(commits, 1):
            lines.append(f"C{n}. {_commit_line(commit)}")
            if commit.undone_by is None:
                buttons.append(await self._button(f"Undo C{n}", UNDO, commit.id, card))
        counts = await self._memory.counts()
        lines.append(
            f"Holding: {counts.archival} fact(s), {counts.episodic} from conversations, "
            f"{counts.core} core block(s), {counts.turns} turn(s), "
            f"{counts.experiences} task experience(s); {counts.commits} commit(s)."
        )
        body = "\n".join(lines)
        body += "\n\n/memory search <words> finds what I remember."
        return Card(
            CardKind.REPLY,
            "Memory",
            body,
            buttons=tuple(buttons),
            correlation_id=card.correlation_id,
        )

    async def _search(self, words: str) -> Card:
        if not words:
            return Card(CardKind.REPLY, "Memory search", "Usage: /memory search <words>")
        card = Card(CardKind.REPLY, "Memory search", "")
        found = await self._memory.recall(words, limit=SHOWN)
        lines = [f"F{n}. {_short(item.text)}" for n, item in enumerate(found, 1)]
        buttons = [
            await self._button(f"Forget F{n}", FORGET, item.id, card)
            for n, item in enumerate(found, 1)
        ]
        return Card(
            CardKind.REPLY,
            "Memory search",
            "\n".join(lines) or f"Nothing remembered matches “{_short(words)}”.",
            buttons=tuple(buttons),
            correlation_id=card.correlation_id,
        )

    async def _button(self, label: str, action: str, target: str, card: Card) -> Button:
        token = await self._tokens.issue(action, {"id": target}, card.correlation_id)
        return Button(label, token)

    def _pressed(
        self, act: Callable[[str], Awaitable[str]]
    ) -> Callable[[PressContext], Awaitable[Card]]:
        async def handler(ctx: PressContext) -> Card:
            try:
                done = await act(str(ctx.payload.get("id", "")))
            except MemoryRefused as exc:
                return Card(CardKind.NOTICE, "Memory unchanged", exc.user_message)
            return Card(CardKind.NOTICE, "Memory", done)

        return handler

    async def _approve(self, quarantine_id: str) -> str:
        commit = await self._memory.approve(quarantine_id)
        return f"Approved: {_commit_line(commit)}. It can reach the model now."

    async def _reject(self, quarantine_id: str) -> str:
        edit = await self._memory.reject(quarantine_id)
        return f"Rejected: {'; '.join(_short(c.text) for c in edit.changes)}. It was not kept."

    async def _undo(self, commit_id: str) -> str:
        commit = await self._memory.undo_commit(commit_id, provenance=Provenance.OWNER)
        return f"Undone: memory is back as it was before that change ({_commit_line(commit)})."

    async def _forget(self, item_id: str) -> str:
        outcome = await self._memory.forget(item_id, provenance=Provenance.OWNER)
        if isinstance(outcome, Commit):
            return "Forgotten (Undo in /memory brings it back)."
        return f"Held for your approval: {outcome.why}."
