"""Who the owner is on each channel, and pairing for a channel whose owner is not known yet.

Settings always win (TELEGRAM_OWNER_ID, GCHAT_OWNER_EMAIL): pairing never runs for a channel
they name. Otherwise an owner who paired before (owners.json) is the owner; failing that the
channel opens a `PairingGate`: a code is printed on the console and in the log, and the first
sender of that code becomes the owner, kept in LANCELOT_HOME and from then treated exactly as
a configured one.

The moment a new owner becomes known is a hook: append an async callable to
`OwnerBook.on_new_owner`; it gets the `NewOwner` once the greeting is on its way (the runner
starts onboarding there).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from core.config import Settings
from core.events import Card, CardKind
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.runtime.tasks import Supervisor
from core.security.owners import OwnerStore, PairedOwner
from core.security.pairing import Attempt, Pairing, PairingLimits, Verdict, shown
from core.security.refusals import RefusalLog

log = logging.getLogger(__name__)

NO_OWNER = "none on Telegram or Google Chat yet (the console is always the owner's)"
LABELS = {"telegram": "Telegram", "gchat": "Google Chat"}
LISTED = 3  # configured Telegram owners named in /status; the rest are counted
ASK = (
    "Lancelot has no owner yet. Send me the code shown where Lancelot runs (its console "
    "and its log) to become its owner."
)


@dataclass(frozen=True, slots=True)
class NewOwner:
    """An owner who just paired: the channel, their id there, the chat to answer in."""

    channel: str
    owner_id: str
    chat_id: str
    name: str


OwnerListener = Callable[[NewOwner], Awaitable[object]]
Answer = Callable[[Card], Awaitable[None]]  # delivers a card to the sender's chat


class OwnerBook:
    """Each channel's owner and how it was set (settings, paired, or waiting to pair)."""

    def __init__(
        self,
        settings: Settings,
        home: Path,
        *,
        out: TextIO | None = None,
        limits: PairingLimits | None = None,
    ) -> None:
        """`out`: where codes are printed (default stdout); `limits`: the code's lifetime
        and the tries allowed."""
        self._settings = settings
        self._limits = limits
        self._store = OwnerStore(home)
        self._paired = self._store.load()
        self._waiting: set[str] = set()
        self._out = out
        self.on_new_owner: list[OwnerListener] = []

    def telegram_ids(self) -> tuple[int, ...]:
        """TELEGRAM_OWNER_ID, else the paired owner (none: pairing)."""
        configured = self._settings.telegram.owner_ids
        paired = self._paired.get("telegram")
        return configured or ((int(paired.owner_id),) if paired else ())

    def gchat_email(self) -> str:
        """GCHAT_OWNER_EMAIL, else the paired owner ("" : pairing)."""
        configured = (self._settings.gchat.owner_email or "").strip().lower()
        paired = self._paired.get("gchat")
        return configured or (paired.owner_id if paired else "")

    def describe(self) -> str:
        """The /status line: each channel's owner and how it was set."""
        configured = {
            "telegram": listed(self._settings.telegram.owner_ids),
            "gchat": self._settings.gchat.owner_email or "",
        }
        parts = []
        for channel, label in LABELS.items():
            paired = self._paired.get(channel)
            if configured[channel]:
                parts.append(f"{label}: {configured[channel]} (from settings)")
            elif paired is not None:
                name = f" ({paired.name})" if paired.name not in ("", paired.owner_id) else ""
                parts.append(f"{label}: {paired.owner_id}{name}, paired on {paired.paired_at[:10]}")
            elif channel in self._waiting:
                parts.append(f"{label}: waiting for pairing")
        return "; ".join(parts) or NO_OWNER

    def open(
        self,
        channel: str,
        *,
        ledger: ReceiptStore,
        tasks: Supervisor,
    ) -> PairingGate:
        """Pairing on `channel`: its code is printed once the channel calls `start` (when it
        is serving), and renewed as it expires."""
        self._waiting.add(channel)
        return PairingGate(self, channel, ledger, self._out or sys.stdout, self._limits, tasks)

    async def record_paired(self, owner: PairedOwner) -> None:
        await asyncio.to_thread(self._store.save, owner)
        self._paired[owner.channel] = owner
        self._waiting.discard(owner.channel)


class PairingGate:
    """Where a channel sends every message from someone who is not (yet) its owner."""

    def __init__(
        self,
        book: OwnerBook,
        channel: str,
        ledger: ReceiptStore,
        out: TextIO,
        limits: PairingLimits | None,
        tasks: Supervisor,
    ) -> None:
        self._book = book
        self.channel = channel
        self._ledger = ledger
        self._out = out
        self._refusals = RefusalLog(ledger)  # one receipt per sender an hour, with a count
        self._adopt: Callable[[str], None] = lambda owner_id: None
        self._lock = asyncio.Lock()
        self._tasks = tasks
        self._started = False
        self._shown: str | None = None  # the code to print once the channel serves
        self.pairing = Pairing(self._announce, limits=limits)

    @property
    def closed(self) -> bool:
        """Pairing is over: someone sent the code."""
        return self.pairing.closed

    def bind(self, adopt: Callable[[str], None]) -> None:
        """`adopt(owner_id)` makes the channel treat that sender as its owner."""
        self._adopt = adopt

    def start(self) -> None:
        """The channel serves now (its token worked): print the code, and keep renewing it."""
        self._started = True
        line, self._shown = self._shown, None
        if line is not None:
            self._print_code(line)
        self._tasks.spawn(self._renew(), name=f"pairing-{self.channel}")

    async def _renew(self) -> None:
        """Replace the code each time it expires, until someone pairs."""
        while not self.pairing.closed:
            await asyncio.sleep(self.pairing.seconds_left() + 0.05)
            self.pairing.refresh()

    async def knock(self, sender: str, chat_id: str, name: str, text: str, reply: Answer) -> None:
        """Judge a message from `sender` in `chat_id`, answered through `reply` (or not at
        all, past the bound). The right code makes the sender the owner: kept, adopted by the
        channel, greeted, and then announced to `OwnerBook.on_new_owner`."""
        async with self._lock:  # two right codes at once: only the first pairs
            attempt = self.pairing.attempt(sender, text)
            if attempt.verdict is Verdict.PAIRED:
                owner = NewOwner(self.channel, sender, chat_id, _printable(name))
                await reply(await self._pair(owner))
                for listener in self._book.on_new_owner:
                    await listener(owner)
                return
        self._refuse(sender, chat_id, attempt)
        if attempt.answer:
            await reply(_answer(attempt))

    async def _pair(self, owner: NewOwner) -> Card:
        when = datetime.now(UTC).isoformat(timespec="seconds")
        await self._book.record_paired(PairedOwner(owner.channel, owner.owner_id, owner.name, when))
        self._adopt(owner.owner_id)
        label = LABELS.get(self.channel, self.channel)
        log.warning("pairing: %s is now the owner on %s", owner.owner_id, label)
        self._ledger.append(
            Receipt(
                action_type="pairing",
                action_name="paired",
                inputs={"channel": self.channel, "owner_id": owner.owner_id, "name": owner.name},
                status=ReceiptStatus.SUCCESS,
            )
        )
        self._print(f"Paired: {owner.name or owner.owner_id} is now the owner on {label}.")
        return Card(
            kind=CardKind.NOTICE,
            title="Paired: you are my owner",
            body=(
                f"Hello{' ' + owner.name if owner.name else ''}, you are now my owner on "
                f"{label}. I take commands from you alone here; anyone else is ignored. "
                "Send /help to see what works."
            ),
        )

    def _refuse(self, sender: str, chat_id: str, attempt: Attempt) -> None:
        """A bounded receipt and a log line; never what was typed."""
        log.info("pairing: %s from %s on %s", attempt.verdict.value, sender, self.channel)
        self._refusals.record(
            "pairing",
            attempt.verdict.value,
            f"{self.channel}:{sender}",
            {"channel": self.channel, "sender_id": sender, "chat_id": chat_id},
        )

    def _announce(self, code: str, ttl: float) -> None:
        label = LABELS.get(self.channel, self.channel)
        within = f"{int(ttl // 60)} minutes" if ttl >= 60 else f"{ttl:g} seconds"
        line = (
            f"Pairing code for {label}: {shown(code)} (send it to the bot within {within} "
            "to become its owner; a new one is shown then)"
        )
        if not self._started:
            self._shown = line  # the latest, printed by `start`
            return
        self._print_code(line)

    def _print_code(self, line: str) -> None:
        log.warning("pairing: %s", line)
        self._print(line)

    def _print(self, line: str) -> None:
        print(line, file=self._out, flush=True)


def _printable(name: str, limit: int = 64) -> str:
    """A display name fit for the console and the log: no control characters (a name is
    whatever its owner typed, escape sequences included), and not too long."""
    return "".join(c for c in name if c.isprintable())[:limit].strip()


def _answer(attempt: Attempt) -> Card:
    """What a sender is told while pairing."""
    verdict = attempt.verdict
    if verdict is Verdict.WRONG:
        body = "That is not the code. Check the code shown where Lancelot runs and send it again."
    elif verdict is Verdict.EXPIRED:
        body = "That code has expired. A new one is shown where Lancelot runs: send me that one."
    elif verdict is Verdict.TOO_MANY:
        minutes = max(1, round(attempt.wait_seconds / 60))
        body = f"Too many tries. Try again in {minutes} minute(s)."
    else:
        body = ASK
    return Card(kind=CardKind.NOTICE, title="Pairing", body=body)


def listed(ids: tuple[int, ...]) -> str:
    """The first few ids and how many more: /status stays one short message however many
    owners the settings name."""
    named = ", ".join(str(i) for i in ids[:LISTED])
    return f"{named} and {len(ids) - LISTED} more" if len(ids) > LISTED else named
