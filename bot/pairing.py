"""Who the owner is on each channel, and pairing for a channel whose owner is not known yet.

Settings always win (each channel's `OwnerSetting`: TELEGRAM_OWNER_ID, GCHAT_OWNER_EMAIL):
pairing never runs for a channel they name. Otherwise an owner who paired before
(owners.json) is the owner; failing that the channel opens a `PairingGate`: a code is printed
on the console and in the log, and the first sender of that code becomes the owner, kept in
LANCELOT_HOME and from then treated exactly as a configured one.

The moment a new owner becomes known is a hook: append an async callable to
`OwnerBook.on_new_owner`; it gets the `NewOwner` once the greeting is on its way (the runner
starts onboarding there).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol, TextIO

from core.config import Settings
from core.events import Card, CardKind
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.runtime.tasks import Supervisor
from core.security.owner_view import OwnerView
from core.security.owners import OwnerStore, PairedOwner
from core.security.pairing import Attempt, Pairing, PairingLimits, Verdict, shown
from core.security.refusals import RefusalLog

log = logging.getLogger(__name__)

LISTED = 3  # configured owners of a channel named in /status; the rest are counted
ASK = (
    "Lancelot has no owner yet. Send me the code shown where Lancelot runs (its console "
    "and its log) to become its owner."
)


@dataclass(frozen=True, slots=True)
class OwnerSetting:
    """How a channel's owner is named in the settings. With none named there (and none paired
    before), the channel opens pairing: the first sender of the printed code becomes it."""

    variable: str  # the environment name, as `lancelot pair` shows it (TELEGRAM_OWNER_ID)
    ids: Callable[[Settings], tuple[str, ...]]  # the owner ids the settings name (() : none)


class Pairable(Protocol):
    """What pairing reads of a channel's descriptor (`bot.channels.spec.ChannelSpec`)."""

    @property
    def name(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def owner(self) -> OwnerSetting | None: ...  # None: no owner to pair (the terminal's)
    @property
    def terminal(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class NewOwner:
    """An owner who just paired: the channel, their id there, the chat to answer in."""

    channel: str
    owner_id: str
    chat_id: str
    name: str


OwnerListener = Callable[[NewOwner], Awaitable[object]]
Answer = Callable[[Card], Awaitable[None]]  # delivers a card to the sender's chat


def _paired_owner(paired: PairedOwner, owner: OwnerView | None) -> str:
    """ "Ada (1001), paired Mon 23 Nov 14:02", or by id and platform name (with no view of
    the owner: the UTC date)."""
    if owner is not None and owner.name:
        return f"{owner.name} ({paired.owner_id}), paired {owner.when_stamp(paired.paired_at)}"
    name = f" ({paired.name})" if paired.name not in ("", paired.owner_id) else ""
    if owner is None:
        return f"{paired.owner_id}{name}, paired on {paired.paired_at[:10]}"
    return f"{paired.owner_id}{name}, paired {owner.when_stamp(paired.paired_at)}"


class OwnerBook:
    """Each channel's owner and how it was set (settings, paired, or waiting to pair)."""

    def __init__(
        self,
        settings: Settings,
        home: Path,
        *,
        out: TextIO | None = None,
        limits: PairingLimits | None = None,
        channels: Sequence[Pairable],
    ) -> None:
        """`out`: where codes are printed (default stdout); `limits`: the code's lifetime
        and the tries allowed; `channels`: whose owners it keeps."""
        self._settings = settings
        self._channels = [c for c in channels if c.owner is not None]
        self._terminal = next((c.label for c in channels if c.terminal), None)
        self._labels = {c.name: c.label for c in channels}
        self._limits = limits
        self._store = OwnerStore(home)
        self._paired = self._store.load()
        self._waiting: set[str] = set()
        self._out = out
        self.on_new_owner: list[OwnerListener] = []

    def owner_ids(self, channel: str) -> tuple[str, ...]:
        """The owners the settings name on `channel`, else the one who paired there (none:
        pairing)."""
        spec = next((spec for spec in self._channels if spec.name == channel), None)
        configured = spec.owner.ids(self._settings) if spec and spec.owner else ()
        paired = self._paired.get(channel)
        return configured or ((paired.owner_id,) if paired else ())

    def describe(self, owner: OwnerView | None = None) -> str:
        """The /status line: each channel's owner and how it was set; with `owner`, by the
        name they gave in onboarding and in their time (else by id and platform name)."""
        parts = []
        called = owner.name if owner is not None else None
        for spec in self._channels:
            assert spec.owner is not None  # only channels with an owner setting are kept
            configured = spec.owner.ids(self._settings)
            paired = self._paired.get(spec.name)
            if configured:
                ids = listed(configured)
                who = f"{called} ({ids}, from settings)" if called else f"{ids} (from settings)"
                parts.append(f"{spec.label}: {who}")
            elif paired is not None:
                parts.append(f"{spec.label}: {_paired_owner(paired, owner)}")
            elif spec.name in self._waiting:
                parts.append(f"{spec.label}: waiting for pairing")
        return "; ".join(parts) or self._nobody()

    def _nobody(self) -> str:
        """The /status line before any owner is known."""
        labels = " or ".join(spec.label for spec in self._channels)
        terminal = self._terminal
        always = f" ({terminal} is always the owner's)" if terminal is not None else ""
        return f"none on {labels} yet{always}"

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

    def label(self, channel: str) -> str:
        """What the owner reads for `channel`."""
        return self._labels.get(channel, channel)

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
        label = self._book.label(self.channel)
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
        label = self._book.label(self.channel)
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


def listed(ids: tuple[str, ...]) -> str:
    """The first few ids and how many more: /status stays one short message however many
    owners the settings name."""
    named = ", ".join(ids[:LISTED])
    return f"{named} and {len(ids) - LISTED} more" if len(ids) > LISTED else named
