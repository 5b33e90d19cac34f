"""The memory's records: frozen dataclasses handed out by the Memory facade, and its errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from core.errors import PermanentError

Role = Literal["owner", "agent", "tool"]
ROLES: tuple[Role, ...] = ("owner", "agent", "tool")


class Provenance(StrEnum):
    """Who an item's text came from. A tool's output (a web page, a file the agent read) is
    never trusted as the owner's word: its edits wait in quarantine."""

    OWNER = "owner"
    AGENT = "agent"
    TOOL = "tool"
    SYSTEM = "system"


class Tier(StrEnum):
    """Where an item lives: core blocks, episodic facts (one conversation's), archival facts."""

    CORE = "core"
    EPISODIC = "episodic"
    ARCHIVAL = "archival"


class Op(StrEnum):
    """A staged change: insert a new item, update or delete one, rethink (rewrite) a core block."""

    INSERT = "insert"
    UPDATE = "update"
    DELETE = "delete"
    RETHINK = "rethink"


class MemoryRefused(PermanentError):
    """A memory edit was refused (too long, nothing but a secret, no such item); the message
    says why in words the owner may read."""

    def __init__(self, message: str) -> None:
        super().__init__(message, user_message=message)


class UndoRefused(MemoryRefused):
    """A commit cannot be undone: a later commit changed the same items, or it was undone."""


STRANGERS = "strangers"  # a turn's label: its words may have been shaped by a stranger's text


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a conversation: the owner's words, the agent's answer or a tool's result."""

    id: str
    chat: str
    conversation: int
    role: Role
    text: str
    at: float
    receipt_id: str | None = None
    label: str = ""  # STRANGERS: said after the request read a stranger's text


@dataclass(frozen=True, slots=True)
class Item:
    """A remembered text: a core block, an episodic or an archival fact."""

    id: str
    tier: Tier
    text: str
    provenance: Provenance
    created_at: float
    updated_at: float
    version: int
    commit_id: str
    block: str | None = None
    chat: str | None = None
    source: str | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """One change of a commit: the item's text after it (before it, for a delete)."""

    op: Op
    item_id: str
    tier: Tier
    text: str
    block: str | None = None


@dataclass(frozen=True, slots=True)
class Commit:
    """An applied edit: its changes went in together and can be undone together."""

    id: str
    at: float
    provenance: Provenance
    reason: str
    changes: tuple[Change, ...]
    undo_of: str | None = None
    undone_by: str | None = None
    quarantine_id: str | None = None


@dataclass(frozen=True, slots=True)
class Committed:
    """remember's answer when the text went in: the new item and its commit."""

    item_id: str
    commit_id: str


@dataclass(frozen=True, slots=True)
class Quarantined:
    """An edit held for the owner's Approve or Reject, and why it was held."""

    quarantine_id: str
    why: str


Remembered = Committed | Quarantined


@dataclass(frozen=True, slots=True)
class QuarantinedEdit:
    """A held edit as the owner's card shows it: the exact texts it would write."""

    id: str
    at: float
    provenance: Provenance
    reason: str
    why: str
    changes: tuple[Change, ...]


@dataclass(frozen=True, slots=True)
class WorkingTask:
    """A chat's current task, kept across restarts: what was asked, the plan, what each step
    did, and the approval it waits on (if any)."""

    chat: str
    request: str
    plan: tuple[str, ...] = ()
    steps: tuple[str, ...] = ()
    approval_id: str | None = None
    quest_id: str | None = None
    started_at: float = 0.0
    updated_at: float = 0.0


@dataclass(frozen=True, slots=True)
class Experience:
    """What the agent did for one request, and how it went, for similar requests later."""

    id: str
    request: str
    plan: tuple[str, ...]
    gaps: tuple[str, ...]
    actions: tuple[str, ...]
    outcome: str
    duration_ms: float
    at: float


EXPERIENCES = "Similar past tasks"  # the context section the deep pass also reads


@dataclass(frozen=True, slots=True)
class CompiledContext:
    """What goes into the system message: (title, text) sections in order, the ids of what
    went in (for the receipt, never the contents) and the tokens used (len/4 estimate)."""

    sections: list[tuple[str, str]] = field(default_factory=list)
    item_ids: list[str] = field(default_factory=list)
    tokens: int = 0
    from_strangers: bool = False  # it holds a turn (or summary) said after reading strangers


@dataclass(frozen=True, slots=True)
class Counts:
    """How much each tier holds, for /memory."""

    core: int
    working: int
    turns: int
    episodic: int
    archival: int
    experiences: int
    quarantined: int
    commits: int


@dataclass(frozen=True, slots=True)
class CleanupReport:
    """What one maintenance pass did."""

    expired_tasks: int = 0
    summarised_turns: int = 0
    summaries: int = 0
    promoted: int = 0
    commit_ids: tuple[str, ...] = ()
