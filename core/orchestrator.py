"""The orchestrator: every inbound event passes the gate, then a command, an action or the agent."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from core.bus import Bus
from core.commands.registry import (
    CommandContext,
    CommandHandler,
    CommandRegistry,
    FreeTextHandler,
    PressContext,
    parse_command,
)
from core.errors import DeliveryDeferred, DeliveryFailed, InvalidToken, LancelotError
from core.events import ButtonPress, Card, CardKind, Inbound
from core.files.intake import Intake
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus, new_receipt_id
from core.runtime.tasks import Supervisor
from core.security.gate import InputGate
from core.security.tokens import ActionTokens

log = logging.getLogger(__name__)

NO_AGENT_REPLY = (
    "Free-form requests need a model provider, and none is configured. Set LANCELOT_PROVIDER "
    "(openai, anthropic or gemini) and its API key. Meanwhile /help lists what works."
)
MAX_CONCURRENT = 64


def reply(title: str, body: str = "", kind: CardKind = CardKind.REPLY) -> Card:
    """A plain reply card."""
    return Card(kind=kind, title=title, body=body)


def _extras(event: Inbound) -> dict[str, object]:
    """What an inbound receipt says of a message's files and unhandled parts."""
    extras: dict[str, object] = {}
    if event.files:
        extras["files"] = [
            {"kind": f.kind.value, "name": f.name, "size": f.size} for f in event.files
        ]
    if event.unhandled:
        extras["unhandled"] = event.unhandled
    return extras


def crash_text(exc: Exception) -> str:
    """What a failure receipt says of an unexpected exception (redacted by the ledger)."""
    return f"crashed: {type(exc).__name__}: {str(exc)[:500]}"


def crash_words(what: str, receipt_id: str) -> tuple[str, str]:
    """The owner's short message about a crash: a title and a body naming the receipt."""
    return (
        f"{what} failed on my side",
        f"Something went wrong in Lancelot itself, not in what you asked. It is recorded in "
        f"receipt {receipt_id} and in the log.",
    )


class Orchestrator:
    """Consumes the bus and turns each event into receipts and cards."""

    def __init__(
        self,
        bus: Bus,
        ledger: ReceiptStore,
        gate: InputGate,
        commands: CommandRegistry,
        tokens: ActionTokens,
        free_text: FreeTextHandler | None = None,
        *,
        tasks: Supervisor | None = None,
        intake: Intake | None = None,
    ) -> None:
        """`intake`: fetches files and hears voice notes (None: text only)."""
        self._bus = bus
        self._intake = intake
        self._supervisor = tasks or Supervisor()
        self._ledger = ledger
        self._gate = gate
        self._commands = commands
        self._tokens = tokens
        self._free_text = free_text
        self._slots = asyncio.Semaphore(MAX_CONCURRENT)
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """Handle events until cancelled; each runs in its own task so a slow one blocks none."""
        try:
            while True:
                event = await self._bus.next_event()
                await self._slots.acquire()
                handling = self._guarded(event)
                task = self._supervisor.spawn(handling, name="orchestrator-event", report=False)
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        finally:
            for task in list(self._tasks):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _guarded(self, event: Inbound | ButtonPress) -> None:
        try:
            await self._handle_safely(event)
            await self._bus.finished(event)  # not when cancelled: then it comes again
        finally:
            self._slots.release()
            self._bus.handled()

    async def _handle_safely(self, event: Inbound | ButtonPress) -> None:
        try:
            if isinstance(event, Inbound):
                await self.handle_inbound(event)
            else:
                await self.handle_press(event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("failed to handle %s from %s", type(event).__name__, event.channel)
            failure = self._record_crash(event, exc)
            await self._answer(event, reply(*crash_words("That", failure)))

    async def handle_inbound(self, event: Inbound) -> None:
        """Gate, record, then dispatch a message."""
        started = time.perf_counter()
        verdict = self._gate.check(f"{event.channel}:{event.sender_id}", event.text)
        meta = {"channel": event.channel, "sender_id": event.sender_id, "chat_id": event.chat_id}
        if not verdict.allowed:
            if verdict.notify:
                self._ledger.append(
                    Receipt(
                        action_type="input_refused",
                        action_name=verdict.rule or "refused",
                        inputs={"chars": len(event.text), "preview": event.text[:200]},
                        outputs={"notes": list(verdict.notes)},
                        status=ReceiptStatus.REFUSED,
                        metadata={**meta, "rule": verdict.rule},
                    )
                )
                await self._answer(event, reply("Not processed", verdict.reply or ""))
            return
        inbound = Receipt(
            action_type="inbound",
            action_name="message",
            inputs={"text": verdict.text, **_extras(event)},
            outputs={"verdict": "allowed", "notes": list(verdict.notes)},
            metadata=meta,
        )
        self._ledger.append(inbound)
        if self._intake is not None and (event.files or event.unhandled):
            card = await self._take_in(event, verdict.text, inbound.id)
        else:
            card = await self._dispatch(event, verdict.text, inbound.id)
        if card is None:
            return
        self._ledger.append(
            Receipt(
                action_type="reply",
                action_name=card.kind,
                outputs={"title": card.title, "body": card.body[:2000]},
                parent_id=inbound.id,
                quest_id=inbound.id,
                duration_ms=(time.perf_counter() - started) * 1000,
                metadata=meta,
            )
        )
        await self._answer(event, card)

    async def _take_in(self, event: Inbound, text: str, receipt_id: str) -> Card | None:
        """Files and what else came with the message first; then its words (a caption, a
        transcript, screened like typed text), with what was saved and heard on the reply."""
        assert self._intake is not None
        taken = await self._intake.take(event, text, receipt_id)
        if taken.reply is not None:
            return taken.reply
        text = taken.text
        if taken.heard:
            screened = self._gate.screen(text)
            if not screened.allowed:
                return taken.annotate(reply("Not processed", screened.reply or ""))
            text = screened.text
        card = await self._dispatch(taken.event, text, receipt_id)
        return taken.annotate(card) if card is not None else None

    async def _dispatch(self, event: Inbound, text: str, receipt_id: str) -> Card | None:
        interceptor = self._commands.interceptor
        if interceptor is not None and parse_command(text) is None:
            taken = await interceptor(event, text, receipt_id)  # onboarding's answers
            if taken is not None:
                return taken
        parsed = parse_command(text) or self._commands.parse_word(text)
        if parsed is None:
            free_text = self._free_text or self._commands.free_text_handler
            if free_text is None:
                return reply("No model configured", NO_AGENT_REPLY)
            await self._bus.typing(event.channel, event.chat_id)
            return await free_text(event, text, receipt_id)
        name, args = parsed
        command = self._commands.get(name)
        if command is None:
            return reply("Unknown command", f"I don't know /{name}. /help lists what works.")
        await self._bus.typing(event.channel, event.chat_id)
        return await self._run_command(command.name, command.handler, event, args, receipt_id)

    async def _run_command(
        self,
        name: str,
        handler: CommandHandler,
        event: Inbound,
        args: str,
        parent_id: str,
    ) -> Card | None:
        started = time.perf_counter()
        status, error, card = ReceiptStatus.SUCCESS, None, None
        receipt_id = new_receipt_id()
        try:
            card = await handler(CommandContext(event, args, parent_id))
        except LancelotError as exc:
            status, error = ReceiptStatus.FAILURE, str(exc)
            card = reply(f"/{name} failed", exc.user_message)
        except Exception as exc:  # a bug in the handler: recorded, and the owner told so
            log.exception("/%s crashed", name)
            status, error = ReceiptStatus.FAILURE, crash_text(exc)
            card = reply(*crash_words(f"/{name}", receipt_id))
        self._ledger.append(
            Receipt(
                id=receipt_id,
                action_type="command",
                action_name=name,
                inputs={"args": args},
                outputs={"title": card.title if card else "(answered with a card)"},
                status=status,
                error_message=error,
                duration_ms=(time.perf_counter() - started) * 1000,
                parent_id=parent_id,
                quest_id=parent_id,
            )
        )
        return card

    async def handle_press(self, event: ButtonPress) -> None:
        """Redeem the token, then run its action. Bad presses change nothing but a receipt."""
        meta = {"channel": event.channel, "sender_id": event.sender_id}
        card_id = self._bus.card_of(event.message_ref)
        try:
            which = None if event.arrival is None else f"{event.channel}:{event.arrival}"
            grant = await self._tokens.redeem(
                event.action_token, event.sender_id, card_id, press=which
            )
        except InvalidToken as exc:
            self._ledger.append(
                Receipt(
                    action_type="button_refused",
                    action_name=exc.reason,
                    inputs={"token": event.action_token[:64]},
                    status=ReceiptStatus.REFUSED,
                    metadata=meta,
                )
            )
            await self._bus.answer_press(event, accepted=False, note=exc.user_message)
            await self._answer(event, reply("Button not accepted", exc.user_message))
            return
        await self._bus.answer_press(event, accepted=True)
        if card_id is None and event.message_ref is not None:
            # A card from before a restart: the message pressed is a copy of it to edit.
            self._bus.remember(grant.card_id, event.message_ref)
        handler = self._commands.press_handler(grant.action)
        press = Receipt(
            action_type="button",
            action_name=grant.action,
            inputs=grant.payload,
            metadata={**meta, "card_id": grant.card_id},
        )
        self._ledger.append(press)
        if handler is None:
            await self._answer(event, reply("That button no longer does anything."))
            return
        updated = await handler(PressContext(event, grant.payload, grant.card_id, press.id))
        if updated is not None:
            await self._bus.update(grant.card_id, updated)

    def _record_crash(self, event: Inbound | ButtonPress, exc: Exception) -> str:
        """A failure receipt for an event whose handling crashed; its id."""
        failure = Receipt(
            action_type="handler_failed",
            action_name="message" if isinstance(event, Inbound) else "button",
            status=ReceiptStatus.FAILURE,
            error_message=crash_text(exc),
            metadata={"channel": event.channel, "sender_id": event.sender_id},
        )
        self._ledger.append(failure)
        return failure.id

    async def _answer(self, event: Inbound | ButtonPress, card: Card) -> None:
        # An update handled again after a crash gets the reply already queued, not a second.
        key = None if event.arrival is None else f"answer:{event.channel}:{event.arrival}"

        async def queued() -> None:  # the outcome is durable: a restart must not redo it
            await self._bus.finished(event)

        try:
            await self._bus.send(event.channel, event.chat_id, card, key=key, queued=queued)
        except DeliveryDeferred as exc:  # queued durably: it goes out when it can
            log.info("reply to %s queued: %s", event.channel, exc)
        except DeliveryFailed as exc:
            log.warning("reply to %s failed: %s", event.channel, exc)
