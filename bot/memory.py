"""Wires memory into a Lancelot: memory.db, /memory and /new, and the agent's side of it."""

from __future__ import annotations

from bot.kernel import Kernel
from core.agent.memory_bridge import ConversationMemory
from core.memory import Memory, MemoryStore
from core.memory.commands import MemoryCommands
from core.receipts.redaction import Redactor


async def wire_memory(app: Kernel, redactor: Redactor) -> Memory | None:
    """Open LANCELOT_HOME/memory.db, register /memory and /new, and show it on the web
    app's /memory page; None with FEATURE_MEMORY off (the agent then answers each message
    on its own, as before memory).

    Raises StorageError (one line naming the file) for a corrupt or newer memory.db: nothing
    in it is touched.
    """
    if not app.features.enabled("MEMORY"):
        return None
    store = await app.stack.enter_async_context(MemoryStore(app.home / "memory.db"))
    memory = Memory(store, app.ledger, redactor=redactor)
    MemoryCommands(memory, app.tokens).register(app.commands)
    app.memory_page.attach(memory)
    return memory


def agent_memory(app: Kernel, memory: Memory | None) -> ConversationMemory | None:
    """What the agent sees and keeps of conversations, within the context budget."""
    if memory is None:
        return None
    return ConversationMemory(memory, app.settings.memory.context_tokens)
