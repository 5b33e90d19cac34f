"""Photos the owner sends, as the model is shown them: the turn's images (a photo, or an image
sent as a file) read back from the inbox, each within a size the providers take."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from core.errors import PermanentError
from core.events import Attachment, FileKind
from core.files.inbox import megabytes
from core.llm.types import Image
from core.tools.workspace import Workspace

# What OpenAI, Anthropic and Gemini all take as image input.
SEEN_TYPES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})
DEFAULT_LIMIT = 5 * 1024 * 1024  # Anthropic's cap per image; the others take more


class PictureRefused(PermanentError):
    """An image of the turn the model will not be shown; `user_message` says why."""


def is_picture(attachment: Attachment) -> bool:
    """A photo, or a document whose type is an image a model can see."""
    return attachment.kind is FileKind.PHOTO or (
        attachment.kind is FileKind.DOCUMENT and attachment.mime in SEEN_TYPES
    )


class Pictures:
    """Reads the turn's pictures from the workspace (where the inbox saved them) as model
    image inputs, refusing one larger than `limit` bytes before it is read."""

    def __init__(self, workspace: Workspace, limit: int = DEFAULT_LIMIT) -> None:
        self._workspace = workspace
        self.limit = limit

    async def of(self, attachments: Sequence[Attachment]) -> tuple[Image, ...]:
        """The images among `attachments`, in order; PictureRefused names one too large."""
        shown = [a for a in attachments if is_picture(a)]
        for attachment in shown:
            if attachment.size > self.limit:
                raise PictureRefused(
                    f"{attachment.path}: {attachment.size} bytes, limit {self.limit}",
                    user_message=f"The picture is {megabytes(attachment.size)}; I show the "
                    f"model pictures up to {megabytes(self.limit)}. Send a smaller one (a "
                    "Telegram photo rather than a file, or a screenshot).",
                )
        return tuple([await self._read(a) for a in shown])

    async def _read(self, attachment: Attachment) -> Image:
        path = self._workspace.resolve(attachment.path)
        data = await asyncio.to_thread(path.read_bytes)
        mime = attachment.mime if attachment.mime in SEEN_TYPES else "image/jpeg"
        return Image(mime, data)
