"""Files out: a workspace file sent to the owner's chat, by /get or the agent's send_file.

One service does it for both: the path goes through the workspace guard (no '..', nothing
outside, no key or credentials file), the size limit holds, images go as photos, and every
file sent leaves a `file_sent` receipt with its sha256. The agent reaches it through
governance, as the `file.send` capability (FileSendOps, a tool provider).
"""

from __future__ import annotations

import asyncio
import json
import stat
from dataclasses import dataclass
from pathlib import Path

from core.bus import Bus
from core.channel import Channel, FileSending
from core.errors import DeliveryFailed, DeliveryRejected, ToolFailed
from core.files.inbox import FileRefused, megabytes
from core.receipts.base import ReceiptStore
from core.receipts.model import Receipt
from core.receipts.registry import FileReceipt
from core.tools.action import ToolAction
from core.tools.base import ToolResult, file_digest
from core.tools.capability import CapabilityTokens
from core.tools.workspace import Workspace

FILE_SEND = "file.send"
CAPABILITIES = (FILE_SEND,)
PHOTO_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".webp"})
PHOTO_MAX = 10 * 1024 * 1024  # Telegram's photo limit; a bigger image goes as a document


@dataclass(frozen=True, slots=True)
class SentFile:
    """A file that reached the owner's chat."""

    path: str  # as the owner names it: /workspace/...
    size: int
    sha256: str
    as_photo: bool


class FileSender:
    """Sends workspace files to a chat on a channel that can carry them."""

    def __init__(self, bus: Bus, workspace: Workspace, ledger: ReceiptStore, limit: int) -> None:
        self._bus = bus
        self._workspace = workspace
        self._ledger = ledger
        self.limit = limit

    async def send(
        self,
        channel: str,
        chat_id: str,
        name: str,
        caption: str = "",
        *,
        parent_id: str | None = None,
    ) -> SentFile:
        """Send `name` (a workspace path). Raises PolicyDenied (the guard), FileRefused
        (missing, a folder, too big, a channel without files) or DeliveryFailed."""
        real = self._workspace.resolve(name)
        shown = self._workspace.display(real)
        size = await asyncio.to_thread(_regular_size, real, shown)
        if size > self.limit:
            raise FileRefused(
                f"{shown} is {size} bytes",
                user_message=f"{shown} is {megabytes(size)}; I send files up to "
                f"{megabytes(self.limit)} (LANCELOT_FILES_MAX_OUT_MB).",
            )
        target = self._sending(channel, f"{shown} ({megabytes(size)}) stays in the workspace")
        as_photo = real.suffix.lower() in PHOTO_SUFFIXES and size <= PHOTO_MAX
        digest = await asyncio.to_thread(file_digest, real) or ""
        await target.send_file(chat_id, real, caption, as_photo=as_photo)
        self._ledger.append(
            Receipt(
                action_type=FileReceipt.FILE_SENT.value,
                action_name="photo" if as_photo else "document",
                inputs={"path": shown, "channel": channel},
                outputs={"size": size, "sha256": digest},
                parent_id=parent_id,
                quest_id=parent_id,
            )
        )
        return SentFile(shown, size, digest, as_photo)

    def owner_chats(self, channel: str) -> tuple[str, ...]:
        """The owner's chats on `channel` (where the agent's files go)."""
        found = self._channel(channel)
        return found.owner_chat_ids if found is not None else ()

    def _channel(self, name: str) -> Channel | None:
        return next((c for c in self._bus.channels if c.name == name), None)

    def _sending(self, name: str, note: str) -> FileSending:
        found: object = self._channel(name)  # (mypy cannot intersect the two protocols)
        if not isinstance(found, FileSending):
            raise FileRefused(
                f"channel {name!r} cannot send files",
                user_message=f"I can't send files on {name}: {note}.",
            )
        return found


def _regular_size(real: Path, shown: str) -> int:
    try:
        info = real.stat()
    except FileNotFoundError:
        raise FileRefused(f"{shown}: missing", user_message=f"There is no file {shown}.") from None
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(f"{shown}: not a file", user_message=f"{shown} is not a file.")
    return info.st_size


class FileSendOps:
    """The `file.send` tool provider: the agent's send_file, after governance allowed it.

    The action names the channel the request came from; the file goes to the owner's chats
    there (Lancelot has one owner).
    """

    name = "file_send"

    def __init__(self, sender: FileSender, capabilities: CapabilityTokens) -> None:
        self._sender = sender
        self._capabilities = capabilities

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        """Send the file named in `action.params` to the owner; what was sent, as JSON."""
        self._capabilities.check(capability, action.digest)
        params = action.params
        channel = str(params.get("channel") or "")
        chats = self._sender.owner_chats(channel)
        if not chats:
            raise ToolFailed(f"no owner chat on {channel!r}", user_message="No chat to send to.")
        sent: SentFile | None = None
        try:
            for chat in chats:
                sent = await self._sender.send(
                    channel, chat, str(params.get("path", "")), str(params.get("caption") or "")
                )
        except FileRefused as exc:
            raise ToolFailed(str(exc), user_message=exc.user_message) from None
        except (DeliveryFailed, DeliveryRejected) as exc:
            raise ToolFailed(str(exc), user_message="The chat did not take the file.") from None
        assert sent is not None
        output = {"sent": sent.path, "as": "photo" if sent.as_photo else "document"}
        return ToolResult(0, json.dumps({**output, "size": sent.size}), provider=self.name)
