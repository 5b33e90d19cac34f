"""The links a message passes, in this order (`message_chain`): the input gate, the intake
receipt, what came with the words (files, voice notes), the conversations that take plain
messages first (onboarding), the commands and their words, and the agent."""

from __future__ import annotations

from dataclasses import replace

from core.bus import Bus
from core.commands.registry import CommandRegistry, parse_command
from core.dispatch.chain import Chain, Link, Outcome, Turn, reply
from core.dispatch.commands import CommandLink
from core.events import Inbound
from core.files.intake import Intake
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus
from core.security.gate import InputGate

NO_AGENT_REPLY = (
    "Free-form requests need a model provider, and none is configured. Set LANCELOT_PROVIDER "
    "(openai, anthropic or gemini) and its API key. Meanwhile /help lists what works."
)


def sender_meta(event: Inbound) -> dict[str, str]:
    """Who sent a message, as its receipts record it."""
    return {"channel": event.channel, "sender_id": event.sender_id, "chat_id": event.chat_id}


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


class GateLink:
    """Size, rate and injection screening: a refused message goes no further (with an
    `input_refused` receipt and a reply when the gate says the owner should hear of it)."""

    name = "input gate"

    def __init__(self, gate: InputGate, ledger: ReceiptStore) -> None:
        self._gate = gate
        self._ledger = ledger

    async def __call__(self, turn: Turn) -> Outcome:
        """The turn with its text cleaned, or the refusal."""
        event = turn.event
        verdict = self._gate.check(f"{event.channel}:{event.sender_id}", turn.text)
        if verdict.allowed:
            return replace(turn, text=verdict.text, gate_notes=tuple(verdict.notes))
        if not verdict.notify:
            return None
        self._ledger.append(
            Receipt(
                action_type="input_refused",
                action_name=verdict.rule or "refused",
                inputs={"chars": len(turn.text), "preview": turn.text[:200]},
                outputs={"notes": list(verdict.notes)},
                status=ReceiptStatus.REFUSED,
                metadata={**sender_meta(event), "rule": verdict.rule},
            )
        )
        return reply("Not processed", verdict.reply or "")


class IntakeReceiptLink:
    """The `inbound` receipt every later receipt of this message hangs under."""

    name = "intake receipt"

    def __init__(self, ledger: ReceiptStore) -> None:
        self._ledger = ledger

    async def __call__(self, turn: Turn) -> Outcome:
        """The turn carrying its receipt's id."""
        inbound = Receipt(
            action_type="inbound",
            action_name="message",
            inputs={"text": turn.text, **_extras(turn.event)},
            outputs={"verdict": "allowed", "notes": list(turn.gate_notes)},
            metadata=sender_meta(turn.event),
        )
        self._ledger.append(inbound)
        return replace(turn, receipt_id=inbound.id)


class AttachmentsLink:
    """Files and what else came with the message first (`core/files/intake.py`); then its
    words (a caption, a transcript screened like typed text) go on, with notes for the reply."""

    name = "attachments"

    def __init__(self, intake: Intake, gate: InputGate) -> None:
        self._intake = intake
        self._gate = gate

    async def __call__(self, turn: Turn) -> Outcome:
        """The turn as its words, or the intake's own reply."""
        if not (turn.event.files or turn.event.unhandled):
            return turn
        taken = await self._intake.take(turn.event, turn.text, turn.receipt_id)
        if taken.reply is not None:
            return taken.reply
        text = taken.text
        if taken.heard:
            screened = self._gate.screen(text)
            if not screened.allowed:
                return taken.annotate(reply("Not processed", screened.reply or ""))
            text = screened.text
        return replace(turn, event=taken.event, text=text, notes=taken.notes)


class ConversationsLink:
    """The routers' conversations (onboarding) see plain messages before commands do."""

    name = "conversations"

    def __init__(self, commands: CommandRegistry) -> None:
        self._commands = commands

    async def __call__(self, turn: Turn) -> Outcome:
        """The first conversation's answer, or the turn handed on."""
        if parse_command(turn.text) is not None:
            return turn
        for conversation in self._commands.conversations:
            card = await conversation(turn.event, turn.text, turn.receipt_id)
            if card is not None:
                return card
        return turn


class AgentLink:
    """What nothing else took goes to the free-text router (the agent), or is told why not."""

    name = "agent"

    def __init__(self, commands: CommandRegistry, bus: Bus) -> None:
        self._commands = commands
        self._bus = bus

    async def __call__(self, turn: Turn) -> Outcome:
        """The agent's answer."""
        answer = self._commands.free_text_handler
        if answer is None:
            return reply("No model configured", NO_AGENT_REPLY)
        await self._bus.typing(turn.event.channel, turn.event.chat_id)
        return await answer(turn.event, turn.text, turn.receipt_id)


def message_chain(
    gate: InputGate,
    ledger: ReceiptStore,
    commands: CommandRegistry,
    bus: Bus,
    intake: Intake | None = None,
) -> Chain:
    """The links of a message, in their order of precedence."""
    links: list[Link] = [GateLink(gate, ledger), IntakeReceiptLink(ledger)]
    if intake is not None:
        links.append(AttachmentsLink(intake, gate))
    links += [
        ConversationsLink(commands),
        CommandLink(commands, bus, ledger),
        AgentLink(commands, bus),
    ]
    return Chain(links)
