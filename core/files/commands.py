"""/get <path>: a workspace file sent to this chat as a document (images as photos)."""

from __future__ import annotations

from core.commands.registry import CommandContext, CommandRegistry, Router
from core.errors import DeliveryFailed, DeliveryRejected, PolicyDenied
from core.events import Card, CardKind
from core.files.inbox import FileRefused
from core.files.outgoing import FileSender

USAGE = "/get <path>, e.g. /get report.pdf or /get /workspace/inbox/photo.jpg"


class FileCommands:
    """Registers /get on the command registry."""

    def __init__(self, sender: FileSender) -> None:
        self._sender = sender

    def register(self, registry: CommandRegistry) -> None:
        """Add /get."""
        router = Router("files")
        router.command(
            "get", "send a workspace file to this chat, e.g. /get report.pdf", self.get, "<path>"
        )
        registry.include(router)

    async def get(self, ctx: CommandContext) -> Card | None:
        """Send the file; the file itself is the answer (a card only when it cannot go)."""
        name = ctx.args.strip()
        if not name:
            return _not_sent(f"Which file? {USAGE}")
        event = ctx.event
        try:
            await self._sender.send(event.channel, event.chat_id, name, parent_id=ctx.receipt_id)
        except PolicyDenied as exc:
            return _not_sent(f"{exc} ({exc.rule}).")
        except FileRefused as exc:
            return _not_sent(exc.user_message)
        except (DeliveryFailed, DeliveryRejected) as exc:
            return _not_sent(f"The chat did not take the file: {exc}")
        return None


def _not_sent(body: str) -> Card:
    return Card(CardKind.REPLY, "Not sent", body)
