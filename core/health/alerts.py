"""Health alerts: a receipt and one card per transition (healthy -> degraded -> recovered),
repeats folded, Details / Acknowledge / Mute 1 h buttons, and a dead-man's switch that sends
a channel's own outage to the owner's other channels (or to the log when there is none).
The state is kept in state.db: a restart neither repeats an alert nor loses its recovery."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from core.bus import Bus
from core.clock import WallClock, iso
from core.commands.registry import CommandRegistry, PressContext, Router
from core.errors import DeliveryFailed
from core.events import Button, Card, CardKind
from core.health.alert_state import AlertStateStore, SavedAlerts, SavedSpell
from core.health.snapshot import HealthSnapshot
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.security.owner_view import OwnerView
from core.security.tokens import ActionTokens

log = logging.getLogger(__name__)

MUTE_SECONDS = 3600.0
STARTING = "starting up"


@dataclass
class _Episode:
    """The degraded spell in progress: its card and what has been seen."""

    card_id: str
    since: float
    reasons: tuple[str, ...]
    repeats: int = 0
    seen: set[str] = field(default_factory=set)
    failing: tuple[str, ...] = ()


class HealthAlerts:
    """Watches the monitor's snapshots and tells the owner about transitions only."""

    def __init__(
        self,
        bus: Bus,
        ledger: ReceiptStore,
        tokens: ActionTokens,
        wall: WallClock,
        owner: OwnerView,
        enabled: Callable[[], bool] = lambda: True,
        store: AlertStateStore | None = None,
    ) -> None:
        self._bus = bus
        self._ledger = ledger
        self._tokens = tokens
        self._wall = wall
        self._owner = owner  # the card's times and names, the owner's
        self._enabled = enabled  # the FEATURE_HEALTH kill switch: receipts only when off
        self.state = "unknown"
        self.muted_until = 0.0
        self._episode: _Episode | None = None
        self._transitions = 0
        self._lock = asyncio.Lock()
        self._store = store

    def register(self, registry: CommandRegistry) -> None:
        """The alert card's buttons."""
        router = Router("health alerts")
        router.action("health.details", self._details)
        router.action("health.ack", self._acknowledge)
        router.action("health.mute", self._mute)
        registry.include(router)

    async def restore(self) -> None:
        """Pick up where the last run left off: a spell still open is not announced again
        (its card keeps working), and its recovery is announced once."""
        saved = await self._store.load() if self._store is not None else None
        if saved is None:
            return
        self.muted_until, self._transitions = saved.muted_until, saved.transitions
        spell = saved.spell
        if saved.state == "degraded" and spell is not None:
            seen = set(spell.seen)
            self._episode = _Episode(
                spell.card_id, spell.since, spell.reasons, spell.repeats, seen, spell.failing
            )
        self.state = "ok" if self._episode is None else "degraded"

    async def _save(self) -> None:
        if self._store is None:
            return
        episode = self._episode
        spell = None
        if episode is not None:
            spell = SavedSpell(
                card_id=episode.card_id,
                since=episode.since,
                reasons=episode.reasons,
                repeats=episode.repeats,
                seen=tuple(sorted(episode.seen)),
                failing=episode.failing,
            )
        saved = SavedAlerts(
            state=self.state,
            muted_until=self.muted_until,
            transitions=self._transitions,
            spell=spell,
        )
        await self._store.save(saved, self._wall.time())

    async def observe(self, snapshot: HealthSnapshot) -> None:
        """One monitor tick: record and announce a transition, fold a repeat. Ticks from the
        monitor loop and the health_sweep job are taken one at a time (one card each way)."""
        async with self._lock:
            await self._observe(snapshot)

    async def _observe(self, snapshot: HealthSnapshot) -> None:
        reasons = tuple(r for r in snapshot.degraded_reasons if r != STARTING)
        if STARTING in snapshot.degraded_reasons:
            return  # not serving yet: nothing to alert about
        degraded = bool(reasons)
        if degraded and self.state == "degraded":
            await self._fold(reasons, snapshot.failing)
        elif degraded:
            await self._degraded(reasons, snapshot)
        elif self.state == "degraded":
            await self._recovered()
        elif self.state == "unknown":
            self._record("health_ok", ReceiptStatus.SUCCESS, ())
            self.state = "ok"
        else:
            return  # healthy as before: nothing new to remember
        await self._save()

    async def _degraded(self, reasons: tuple[str, ...], snapshot: HealthSnapshot) -> None:
        self.state = "degraded"
        self._transitions += 1
        card_id = f"health-{int(self._wall.time())}-{self._transitions}"
        self._episode = _Episode(
            card_id, self._wall.time(), reasons, seen=set(reasons), failing=snapshot.failing
        )
        self._record("health_degraded", ReceiptStatus.FAILURE, reasons, snapshot.failing)
        await self._announce(await self._alert_card(), reasons)

    async def _fold(self, reasons: tuple[str, ...], failing: tuple[str, ...]) -> None:
        episode = self._episode
        assert episode is not None
        episode.repeats += 1
        new = [r for r in reasons if r not in episode.seen]
        episode.reasons, episode.failing = reasons, failing
        if new:  # a new problem joins the spell: the same card says so, no new card
            episode.seen.update(new)
            await self._bus.update(episode.card_id, await self._alert_card())

    async def _recovered(self) -> None:
        episode = self._episode
        self.state = "ok"
        self._episode = None
        self._transitions += 1
        lasted = self._wall.time() - episode.since if episode else 0.0
        self._record("health_recovered", ReceiptStatus.SUCCESS, (), lasted=lasted)
        card = Card(
            kind=CardKind.ALERT,
            title="Recovered: every health check passes",
            body=f"Degraded for {_minutes(lasted)}"
            + (f", seen on {episode.repeats + 1} checks." if episode else "."),
            correlation_id=f"health-recovered-{int(self._wall.time())}-{self._transitions}",
        )
        await self._announce(card, ())

    def _record(
        self,
        kind: str,
        status: ReceiptStatus,
        reasons: tuple[str, ...],
        failing: tuple[str, ...] = (),
        lasted: float | None = None,
    ) -> None:
        self._ledger.append(
            Receipt(
                action_type=kind,
                action_name="health",
                outputs={"reasons": list(reasons), "degraded_seconds": lasted},
                status=status,
                metadata={"failing_checks": list(failing), "muted": self._muted()},
            )
        )

    def _muted(self) -> bool:
        return self._wall.time() < self.muted_until or not self._enabled()

    async def _announce(self, card: Card, reasons: tuple[str, ...]) -> None:
        """Every owner chat on every channel that is not itself the one failing."""
        if self._muted():
            log.warning("health alert (muted): %s %s", card.title, "; ".join(reasons))
            return
        down = {
            c.name for c in self._bus.channels if any(r.startswith(f"{c.name}:") for r in reasons)
        }
        targets = [c for c in self._bus.channels if c.name not in down]
        if not targets:
            log.warning(
                "HEALTH ALERT (no channel left to tell): %s: %s", card.title, "; ".join(reasons)
            )
            return
        for channel in targets:
            for chat_id in channel.owner_chat_ids:
                try:
                    await self._bus.send(channel.name, chat_id, card)
                except DeliveryFailed as exc:
                    log.warning("health alert not delivered on %s: %s", channel.name, exc)

    async def _alert_card(self, note: str = "", *, buttons: bool = True) -> Card:
        episode = self._episode
        assert episode is not None
        lines = [f"- {r}" for r in episode.reasons]
        if episode.repeats:
            lines.append(f"(still degraded after {episode.repeats + 1} checks)")
        if note:
            lines.append(note)
        return Card(
            kind=CardKind.ALERT,
            title="Health degraded",
            body="\n".join(lines),
            fields=(("Since", self._owner.when(episode.since, self._wall.time())),),
            buttons=await self._buttons(episode.card_id) if buttons else (),
            correlation_id=episode.card_id,
        )

    async def _buttons(self, card_id: str) -> tuple[Button, ...]:
        made = []
        for label, action in (
            ("Details", "health.details"),
            ("Acknowledge", "health.ack"),
            ("Mute 1 h", "health.mute"),
        ):
            token = await self._tokens.issue(action, {}, card_id, ttl=24 * 3600)
            made.append(Button(label, token))
        return tuple(made)

    async def _current(self, ctx: PressContext, note: str, *, buttons: bool) -> Card:
        if self._episode is None or self._episode.card_id != ctx.card_id:
            return Card(
                kind=CardKind.ALERT, title="Health alert", body=note, correlation_id=ctx.card_id
            )
        return await self._alert_card(note, buttons=buttons)

    async def _details(self, ctx: PressContext) -> Card:
        episode = self._episode
        note = (
            "That spell is over."
            if episode is None
            else (
                f"Problems seen: {', '.join(sorted(episode.seen))}. "
                f"State now: {self.state}; alerts {'muted' if self._muted() else 'on'}."
            )
        )
        return await self._current(ctx, note, buttons=True)

    async def _acknowledge(self, ctx: PressContext) -> Card:
        who = self._owner.name or "the owner"
        return await self._current(ctx, f"Acknowledged by {who}.", buttons=False)

    async def _mute(self, ctx: PressContext) -> Card:
        self.muted_until = self._wall.time() + MUTE_SECONDS
        await self._save()
        self._ledger.append(
            Receipt(
                action_type="health_muted",
                action_name="health",
                outputs={"until": iso(self.muted_until)},
            )
        )
        return await self._current(
            ctx,
            f"Alerts muted until {self._owner.until(self.muted_until, self._wall.time())} "
            "(receipts still kept).",
            buttons=False,
        )


def _minutes(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes} min" if minutes else f"{int(seconds)} s"
