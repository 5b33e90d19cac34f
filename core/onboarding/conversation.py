"""The first conversation with a new owner: one question a message, kept in state.db, so a
restart in the middle resumes at the same question. See core/onboarding/progress.py for the
moves and core/onboarding/cards.py for the words."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from core.bus import Bus
from core.commands.registry import CommandContext, CommandHandler, PressContext, Router
from core.errors import DeliveryDeferred, DeliveryFailed
from core.events import Button, Card, CardKind, Inbound
from core.llm.key_check import KeyCheck
from core.onboarding import cards
from core.onboarding.answers import looks_like_key, read_name, read_timezone
from core.onboarding.cards import ChannelNote
from core.onboarding.progress import Progress, Status, Step
from core.onboarding.store import OnboardingStore
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt
from core.security.tokens import ActionTokens

log = logging.getLogger(__name__)

ANSWER = "onboarding.answer"  # a button: payload {"step", "value"} or {"step", "test"}
NEXT_WORDS = frozenset({"next", "continue", "done", "finish", "keep", "ok"})


# The words that work at any step. ASK AGAIN shows the current question again; RESEND CODE and
# RESEND are its older spellings, still understood.
WORDS = frozenset(
    {"STATUS", "BACK", "RESTART STEP", "ASK AGAIN", "RESEND CODE", "RESEND", "RESET", "SKIP"}
)


@dataclass(frozen=True, slots=True)
class Seams:
    """What onboarding asks of the rest of Lancelot (wired by bot/onboarding.py)."""

    keyed: Callable[[], tuple[str, ...]]  # providers with a key, from the settings
    check_key: Callable[[str], Awaitable[KeyCheck]]  # one tiny call with that key
    use_provider: Callable[[str], None]  # the router thinks with it from now on
    provider: Callable[[], str | None]  # the flagship answering now
    remember_name: Callable[[str], Awaitable[None]]  # the name, where the agent sees it
    default_timezone: str  # the settings' timezone, kept when the owner does not choose
    channels: Callable[[str], tuple[ChannelNote, ...]]  # the channels besides this one
    has_local: Callable[[], bool] = lambda: False  # a local model can answer small jobs


class Onboarding:
    """Takes the owner's plain messages while onboarding is under way (commands still work),
    answers its buttons, and says where it stands for the scheduler's gate and /health."""

    def __init__(
        self,
        store: OnboardingStore,
        seams: Seams,
        bus: Bus,
        tokens: ActionTokens,
        ledger: ReceiptStore,
    ) -> None:
        self._store = store
        self._seams = seams
        self._bus = bus
        self._tokens = tokens
        self._ledger = ledger
        self._progress = Progress()
        self._lock = asyncio.Lock()

    async def setup(self) -> None:
        """Create the table and load the saved progress."""
        await self._store.setup()
        self._progress = await self._store.load()

    @property
    def progress(self) -> Progress:
        """Where the owner stands now."""
        return self._progress

    def label(self) -> str:
        """The state for /health: NOT_STARTED, IN_PROGRESS: step n of 4 (...), DONE, SKIPPED."""
        return self._progress.label()

    def router(self, greeting: CommandHandler) -> Router:
        """/start (begins onboarding the first time or with `setup`, asks the current
        question while it runs, else answers with `greeting`), the plain messages while it
        runs, and its buttons."""
        router = Router("onboarding")
        router.command("start", "greeting and what I can do", self._start(greeting))
        router.converse(self.take)
        router.action(ANSWER, self.pressed)
        return router

    def _start(self, greeting: CommandHandler) -> CommandHandler:
        async def start(ctx: CommandContext) -> Card | None:
            wanted = ctx.args.strip().lower() == "setup"
            status = self._progress.status
            if wanted or status is Status.NOT_STARTED:
                return await self.begin(ctx.event.channel)
            if status is Status.IN_PROGRESS:
                return await self._ask(ctx.event.channel)
            return await greeting(ctx)

        return start

    async def begin(self, channel: str, suggested: str = "") -> Card:
        """Start (or start again) from the first question; the card to send. `suggested`:
        the name the platform gave (offered as a button)."""
        async with self._lock:  # the /start command's own receipt records this
            await self._move(self._progress.begin(), "begin", None, record=False)
        card = await self._ask(channel, first=True)
        name = read_name(suggested) if suggested else None
        if name is None:
            return card  # no button: an answer to /start can ride on its event (Google Chat)
        payload = {"step": Step.NAME.value, "value": name}
        token = await self._tokens.issue(ANSWER, payload, card.correlation_id)
        button = Button(f"Call me {name}", token)
        return Card(card.kind, card.title, card.body, card.fields, (button,), card.correlation_id)

    async def welcome(self, channel: str, chat_id: str, name: str = "") -> bool:
        """A new owner became known (paired from chat): begin onboarding and send its first
        question to that chat (offering `name`, the platform's, as a button), unless
        onboarding has begun before. Whether it began."""
        if self._progress.status is not Status.NOT_STARTED:
            return False
        await self._send(channel, chat_id, await self.begin(channel, name))
        return True

    async def take(self, event: Inbound, text: str, receipt_id: str) -> Card | None:
        """The answer to the current question, or a word; None when onboarding is not under
        way (the message goes on as usual)."""
        if self._progress.status is not Status.IN_PROGRESS:
            return None
        word = " ".join(text.upper().strip(" .!?").split())
        async with self._lock:
            if word in WORDS:
                return await self._word(word, event.channel, receipt_id)
            if looks_like_key(text):
                return Card(CardKind.NOTICE, "Not kept: that looks like a key", cards.KEY_REFUSED)
            return await self._answer(self._progress.step, text, event.channel, receipt_id)

    async def pressed(self, ctx: PressContext) -> Card | None:
        """A button of a step's card: the same as typing its answer, if that step is current."""
        step = Step(str(ctx.payload.get("step")))
        channel, chat = ctx.event.channel, ctx.event.chat_id
        if self._progress.status is not Status.IN_PROGRESS or self._progress.step is not step:
            return Card(CardKind.REPLY, "Onboarding", "That question was already answered.")
        if "test" in ctx.payload:  # the card's buttons are spent: it comes back with new ones
            await self._send(channel, chat, await self._test_card(str(ctx.payload["test"])))
            return await self._ask(channel, card_id=ctx.card_id)
        value = str(ctx.payload.get("value", ""))
        async with self._lock:
            reply = await self._answer(step, value, channel, ctx.receipt_id)
        await self._send(channel, chat, reply)
        shown = value or "continue"
        return Card(CardKind.REPLY, cards.step_title(step).capitalize(), f"Chosen: {shown}")

    async def _word(self, word: str, channel: str, receipt_id: str) -> Card:
        p = self._progress
        if word == "STATUS":
            return cards.status_card(p, self._seams.provider(), self._timezone())
        if word == "SKIP":
            await self._move(p.skip(), "skip", receipt_id)
            return cards.summary(self._progress, self._seams.provider(), self._timezone())
        moved = {"BACK": p.back(), "RESTART STEP": p.restart_step(), "RESET": p.reset()}
        if word in moved:
            await self._move(moved[word], word.lower().replace(" ", "_"), receipt_id)
        return await self._ask(channel)

    async def _answer(self, step: Step, text: str, channel: str, receipt_id: str) -> Card:
        if step is Step.NAME:
            name = read_name(text)
            if name is None:
                body = f"I can't use {text[:40]!r} as a name. Type the name I should call you."
                return Card(CardKind.REPLY, cards.heading(self._progress), body)
            await self._seams.remember_name(name)
            await self._move(self._progress.answer(name=name), "name", receipt_id, name)
        elif step is Step.PROVIDER:
            refusal = await self._provider(text.strip().lower(), receipt_id)
            if refusal is not None:
                return refusal
        elif step is Step.TIMEZONE:
            said = text.strip().lower()
            zone = self._timezone() if said in NEXT_WORDS else read_timezone(text)
            if zone is None:
                body = (
                    f"I don't know the timezone {text[:60]!r}. Try a name like Europe/Paris, "
                    "America/New_York or UTC, or a city like Tokyo."
                )
                return Card(CardKind.REPLY, cards.heading(self._progress), body)
            await self._move(self._progress.answer(timezone=zone), "timezone", receipt_id, zone)
        else:
            if text.strip().lower() not in NEXT_WORDS:
                body = (
                    "Tap Finish (or type DONE) to end onboarding; BACK goes to the question before."
                )
                return Card(CardKind.REPLY, cards.heading(self._progress), body)
            await self._move(self._progress.answer(), "channels", receipt_id)
        if self._progress.status is Status.DONE:
            return cards.summary(self._progress, self._seams.provider(), self._timezone())
        return await self._ask(channel)

    async def _provider(self, said: str, receipt_id: str) -> Card | None:
        """Use the provider named (its key checked again), or go on with what answers now."""
        if said in NEXT_WORDS or said == "":
            current = self._seams.provider() or ""
            await self._move(self._progress.answer(provider=current), "provider", receipt_id)
            return None
        if said not in self._seams.keyed():
            keyed = ", ".join(self._seams.keyed()) or "none"
            body = f"{said[:40]!r} is not a provider with a key here (with a key: {keyed})."
            return Card(CardKind.REPLY, cards.heading(self._progress), body)
        check = await self._seams.check_key(said)
        if not check.ok:
            body = f"{said}'s key did not answer: {check.detail}. Choose another, or Continue."
            return Card(CardKind.REPLY, cards.heading(self._progress), body)
        self._seams.use_provider(said)
        await self._move(self._progress.answer(provider=said), "provider", receipt_id, said)
        return None

    async def _ask(self, channel: str, *, first: bool = False, card_id: str | None = None) -> Card:
        """The current step's card, with its buttons (as a new card, or as `card_id` anew)."""
        p = self._progress
        if p.step is Step.NAME:
            return cards.name_card(p, first=first)
        fields: tuple[tuple[str, str], ...] = ()
        choices: list[tuple[str, dict[str, Any]]] = []
        if p.step is Step.PROVIDER:
            checks = await self._check_all()
            body = cards.provider_body(checks, self._seams.provider(), self._seams.has_local())
            fields = cards.check_fields(checks)
            choices = [(f"Use {c.provider}", {"value": c.provider}) for c in checks if c.ok]
            choices.append(("Continue", {"value": ""}))
        elif p.step is Step.TIMEZONE:
            body = cards.timezone_body(p, self._seams.default_timezone)
            choices = [(f"Keep {self._timezone()}", {"value": self._timezone()})]
        else:
            others = self._seams.channels(channel)
            body = cards.channels_body(channel, others)
            choices = [(f"Test card to {n.label}", {"test": n.name}) for n in others if n.attached]
            choices.append(("Finish", {"value": "done"}))
        card = Card(CardKind.REPLY, cards.heading(p), body, fields)
        card_id = card_id or card.correlation_id
        buttons = []
        for label, payload in choices:
            token = await self._tokens.issue(ANSWER, {"step": p.step.value, **payload}, card_id)
            buttons.append(Button(label, token))
        return Card(card.kind, card.title, body, fields, tuple(buttons), card_id)

    async def _check_all(self) -> list[KeyCheck]:
        """Every keyed provider checked live, at once (each time the question is asked)."""
        found = await asyncio.gather(*(self._seams.check_key(name) for name in self._seams.keyed()))
        return list(found)

    async def _test_card(self, name: str) -> Card:
        """Send a test card to channel `name`; what to tell the owner about it."""
        notes = {n.name: n for n in self._seams.channels("")}
        note = notes.get(name)
        target = next((c for c in self._bus.channels if c.name == name), None)
        if note is None or target is None or not target.owner_chat_ids:
            return Card(CardKind.REPLY, "Test card not sent", f"{name} is not set up here.")
        test = Card(CardKind.NOTICE, "Test card from Lancelot", f"{note.label} works.")
        try:
            for chat in target.owner_chat_ids:
                await self._bus.send(name, chat, test)
        except DeliveryDeferred:
            return Card(CardKind.REPLY, "Test card queued", f"It goes to {note.label} shortly.")
        except DeliveryFailed as exc:
            log.warning("onboarding: the test card to %s failed: %s", name, exc)
            return Card(CardKind.REPLY, "Test card not sent", f"{note.label} refused it: {exc}")
        return Card(CardKind.REPLY, "Test card sent", f"Look for it on {note.label}.")

    async def _move(
        self,
        progress: Progress,
        action: str,
        receipt_id: str | None,
        answer: str = "",
        *,
        record: bool = True,
    ) -> None:
        """Keep the new progress, then (with `record`) an onboarding receipt of the move."""
        await self._store.save(progress)
        self._progress = progress
        if not record:
            return
        self._ledger.append(
            Receipt(
                action_type="onboarding",
                action_name=action,
                inputs={"answer": answer} if answer else {},
                outputs={"state": progress.label()},
                parent_id=receipt_id,
            )
        )

    def _timezone(self) -> str:
        return self._progress.timezone or self._seams.default_timezone

    async def _send(self, channel: str, chat: str, card: Card) -> None:
        try:
            await self._bus.send(channel, chat, card)
        except DeliveryDeferred:
            pass
        except DeliveryFailed as exc:
            log.warning("onboarding: could not answer on %s: %s", channel, exc)
