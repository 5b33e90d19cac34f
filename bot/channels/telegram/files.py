"""Files through the Bot API: getFile then the file download, streamed; sendDocument and
sendPhoto as multipart uploads."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
from telegram import Bot, Message

from bot.channels.telegram.sender import chat_number, translated
from core.errors import DeliveryFailed, DeliveryRejected

log = logging.getLogger(__name__)

CHUNK = 64 * 1024
CAPTION_LIMIT = 1024


async def download(bot: Bot, client: httpx.AsyncClient, file_id: str) -> AsyncIterator[bytes]:
    """The file's bytes in chunks: getFile names it, then the file URL serves it.

    The URL holds the bot token, so no error raised here repeats it.
    """
    with translated("getFile"):
        found = await bot.get_file(file_id)
    url = found.file_path
    if not url:
        raise DeliveryRejected("getFile: Telegram gave no file path")
    try:
        async with client.stream("GET", url) as response:
            if response.status_code != httpx.codes.OK:
                error = DeliveryRejected if response.status_code < 500 else DeliveryFailed
                raise error(f"file download: HTTP {response.status_code}")
            async for chunk in response.aiter_bytes(CHUNK):
                yield chunk
    except httpx.HTTPError as exc:
        raise DeliveryFailed(f"file download failed ({type(exc).__name__})") from None


async def upload(bot: Bot, chat_id: str, path: Path, caption: str, *, as_photo: bool) -> Message:
    """sendPhoto or sendDocument with the file's bytes (read in a thread); a photo Telegram
    refuses (odd dimensions, say) goes again as a document."""
    chat = chat_number(chat_id)
    data = await asyncio.to_thread(path.read_bytes)
    text = caption[:CAPTION_LIMIT] or None
    if as_photo:
        try:
            with translated("sendPhoto"):
                return await bot.send_photo(chat, data, caption=text, filename=path.name)
        except DeliveryRejected as exc:
            log.info(
                "telegram refused %s as a photo (%s); sending it as a document", path.name, exc
            )
    with translated("sendDocument"):
        return await bot.send_document(chat, data, caption=text, filename=path.name)
