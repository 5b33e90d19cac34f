"""The ReceiptStore interface and the query/page/report types it speaks."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

from core.receipts.model import Receipt, StoredReceipt


@dataclass(frozen=True, slots=True)
class ReceiptQuery:
    """A page request: optional filters and a keyset cursor (receipts older than `before_seq`)."""

    action_type: str | None = None
    status: str | None = None
    text: str | None = None
    before_seq: int | None = None
    limit: int = 50


@dataclass(frozen=True, slots=True)
class ReceiptPage:
    """Newest-first receipts and the cursor for the next (older) page, if any."""

    receipts: tuple[StoredReceipt, ...]
    next_before_seq: int | None


@dataclass(frozen=True, slots=True)
class Story:
    """One request and what it led to: a receipt with no parent and no quest (an owner's
    message, a scheduled run, ...) and the receipts of its quest, oldest first."""

    root: StoredReceipt
    members: tuple[StoredReceipt, ...]
    size: int  # receipts in the quest; more than `members` holds when it is long


@dataclass(frozen=True, slots=True)
class StoryPage:
    """Newest-first stories and the cursor for the next (older) page, if any."""

    stories: tuple[Story, ...]
    next_before_seq: int | None


# What the first checkpoint of a chain carries as the link of the one before it.
CHAIN_START = "0" * 64


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A signed statement that the ledger held `seq` receipts, the last hashing to `head`.

    Checkpoints form a chain of their own: checkpoint `number` carries `previous`, the link
    of the one before it (CHAIN_START for the first), so a checkpoint line removed, repeated
    or moved shows. Number 0 is a legacy checkpoint, written before they were numbered: it
    carries no link and is checked by its signature alone."""

    seq: int
    head: str
    time: str  # UTC, ISO 8601
    signature: str  # ed25519 over `message`, hex
    number: int  # its place in the chain, from 1; 0 for a legacy checkpoint
    previous: str  # the link of the checkpoint before it; "" for a legacy checkpoint

    @property
    def legacy(self) -> bool:
        """Written before checkpoints were numbered (no number, no link)."""
        return self.number == 0

    @property
    def message(self) -> bytes:
        """The bytes the signature covers: everything the checkpoint states."""
        if self.legacy:
            return f"lancelot-checkpoint-v1\n{self.seq}\n{self.head}\n{self.time}\n".encode()
        return (
            f"lancelot-checkpoint-v2\n{self.number}\n{self.seq}\n{self.head}\n{self.time}\n"
            f"{self.previous}\n"
        ).encode()

    @property
    def link(self) -> str:
        """What the next checkpoint carries: the SHA-256 of this one's message, hex."""
        return hashlib.sha256(self.message).hexdigest()

    @property
    def fingerprint(self) -> str:
        """What the owner can copy from a chat: the sequence and the head's first 16 hex."""
        return fingerprint(self.seq, self.head)


def fingerprint(seq: int, head: str) -> str:
    """`<seq>:<first 16 hex of the hash>`: short enough to read, long enough to bind."""
    return f"{seq}:{head[:16]}"


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The outcome of walking the hash chain and checking it against the checkpoints.

    `last_checkpoint` is the newest checkpoint the ledger matched; `checkpoints` how many
    were checked; `head` the fingerprint of the ledger's last receipt."""

    ok: bool
    checked: int
    first_bad_seq: int | None = None
    reason: str | None = None
    file: str | None = None
    checkpoints: int = 0
    last_checkpoint: Checkpoint | None = None
    head: str | None = None
    readable: bool = True  # False: the file could not be read at all (reason says why)
    key: str | None = None  # the fingerprint of the public key that checked the checkpoints


class ReceiptStore(Protocol):
    """Append-only storage of receipts."""

    def append(self, receipt: Receipt) -> None:
        """Queue a receipt for the next batched write; never blocks."""

    async def append_durable(self, receipt: Receipt) -> StoredReceipt:
        """Write a receipt and return once it is committed to disk."""

    async def flush(self) -> None:
        """Return once every receipt queued so far is committed."""

    async def get(self, receipt_id: str) -> StoredReceipt | None:
        """One receipt by id."""

    async def children(self, receipt_id: str, limit: int = 100) -> list[StoredReceipt]:
        """Receipts whose parent is `receipt_id`, oldest first."""

    async def page(self, query: ReceiptQuery) -> ReceiptPage:
        """A newest-first page matching the query."""

    async def stories(self, before_seq: int | None, limit: int) -> StoryPage:
        """A newest-first page of requests, each with the receipts of its quest."""

    async def count_matching(self, text: str, cap: int) -> int:
        """How many receipts contain the words of `text` (counting stops at `cap` + 1)."""

    @property
    def latest_checkpoint(self) -> Checkpoint | None:
        """The newest signed checkpoint (None: not signing, or none yet)."""

    async def count(self) -> int:
        """How many receipts are stored."""

    @property
    def recorded(self) -> int:
        """How many receipts this ledger holds, queued ones included (kept as commits land,
        no query: for /status)."""

    async def action_types(self) -> list[str]:
        """Distinct action types, for filter menus."""

    async def verify(self) -> VerifyReport:
        """Walk the chain, check it against every checkpoint, and report the first problem."""

    async def checkpoint(self) -> Checkpoint | None:
        """Commit what is queued and sign a checkpoint at the head (None: not signing)."""
