"""The commands link: `/name args` (or a word standing for one) runs that router's handler,
with a `command` receipt; an unknown command is told so; anything else goes on."""

from __future__ import annotations

import logging
import time

from core.bus import Bus
from core.commands.registry import Command, CommandContext, CommandRegistry, parse_command
from core.dispatch.chain import Outcome, Turn, reply
from core.errors import LancelotError
from core.events import Card
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt, ReceiptStatus, new_receipt_id

log = logging.getLogger(__name__)


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


class CommandLink:
    """Runs the command a message names; hands plain text on."""

    name = "commands"

    def __init__(self, commands: CommandRegistry, bus: Bus, ledger: ReceiptStore) -> None:
        self._commands = commands
        self._bus = bus
        self._ledger = ledger

    async def __call__(self, turn: Turn) -> Outcome:
        """The command's reply, the unknown-command reply, or the turn handed on."""
        parsed = parse_command(turn.text) or self._commands.parse_word(turn.text)
        if parsed is None:
            return turn
        name, args = parsed
        command = self._commands.get(name)
        if command is None:
            return reply("Unknown command", f"I don't know /{name}. /help lists what works.")
        await self._bus.typing(turn.event.channel, turn.event.chat_id)
        return await self._run(command, turn, args)

    async def _run(self, command: Command, turn: Turn, args: str) -> Card | None:
        """The handler's card; a failure becomes a reply, and either way a receipt."""
        started = time.perf_counter()
        status, error, card = ReceiptStatus.SUCCESS, None, None
        receipt_id = new_receipt_id()
        try:
            card = await command.handler(CommandContext(turn.event, args, turn.receipt_id))
        except LancelotError as exc:
            status, error = ReceiptStatus.FAILURE, str(exc)
            card = reply(f"/{command.name} failed", exc.user_message)
        except Exception as exc:  # a bug in the handler: recorded, and the owner told so
            log.exception("/%s crashed", command.name)
            status, error = ReceiptStatus.FAILURE, crash_text(exc)
            card = reply(*crash_words(f"/{command.name}", receipt_id))
        self._ledger.append(
            Receipt(
                id=receipt_id,
                action_type="command",
                action_name=command.name,
                inputs={"args": args},
                outputs={"title": card.title if card else "(answered with a card)"},
                status=status,
                error_message=error,
                duration_ms=(time.perf_counter() - started) * 1000,
                parent_id=turn.receipt_id,
                quest_id=turn.receipt_id,
            )
        )
        return card
