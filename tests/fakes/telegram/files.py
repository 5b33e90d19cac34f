"""Files on the fake Telegram: what users send (photo, document, voice, ...), getFile, the
file download route (streamed, as Telegram's file server does) and sendPhoto.

Like Telegram's cloud Bot API, getFile refuses files over 20 MB ("file is too big") unless
the fake plays a self-hosted Bot API server (`local_server`).
"""

from __future__ import annotations

import asyncio
import copy
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from . import objects
from .errors import bad_request
from .params import Params
from .reply import Method

if TYPE_CHECKING:
    from .state import TelegramState as State

CLOUD_LIMIT = 20 * 1024 * 1024
CHUNK = 64 * 1024
_FOLDERS = {
    "photo": "photos",
    "document": "documents",
    "audio": "music",
    "video": "videos",
    "voice": "voice",
    "video_note": "video_notes",
    "animation": "animations",
}


@dataclass
class UserFile:
    """A file a user sent: its bytes (None: only announced, never served) and size."""

    file_id: str
    kind: str
    size: int
    content: bytes | None
    path: str


@dataclass
class FileStore:
    """Files users sent, by file_id and by path, and every download the bot made."""

    by_id: dict[str, UserFile] = field(default_factory=dict)
    by_path: dict[str, UserFile] = field(default_factory=dict)
    downloads: list[str] = field(default_factory=list)  # file_ids, each time served
    local_server: bool = False  # a self-hosted Bot API server: no 20 MB getFile limit
    chunk_delay: float = 0.0  # seconds between served chunks (a slower network)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def add(self, kind: str, content: bytes | None, size: int | None, ext: str) -> UserFile:
        n = next(self._ids)
        file_id = f"AgACAgIAAxk{kind[:3].upper()}{n:06d}"
        path = f"{_FOLDERS.get(kind, 'documents')}/file_{n}{ext}"
        stored = UserFile(
            file_id, kind, size if size is not None else len(content or b""), content, path
        )
        self.by_id[file_id] = stored
        self.by_path[path] = stored
        return stored


def media_object(kind: str, stored: UserFile, file_name: str | None, mime: str | None) -> Any:
    """The Message field for the file, as Telegram shapes each kind."""
    base: dict[str, Any] = {
        "file_id": stored.file_id,
        "file_unique_id": "AQAD" + stored.file_id[-6:],
        "file_size": stored.size,
    }
    if kind == "photo":  # several sizes; the phone's largest is the original
        small = {**base, "file_id": stored.file_id + "s", "width": 90, "height": 60}
        small["file_size"] = min(stored.size, 1200)
        return [small, {**base, "width": 1280, "height": 853}]
    if kind in ("voice", "audio", "video", "video_note", "animation"):
        base["duration"] = 3
    if kind in ("video", "animation"):
        base.update(width=640, height=360)
    if kind == "video_note":
        base["length"] = 240
    if file_name and kind not in ("voice", "video_note"):
        base["file_name"] = file_name
    if mime and kind != "video_note":
        base["mime_type"] = mime
    return base


def send_file(
    state: State,
    kind: str,
    content: bytes | None,
    *,
    user_id: int,
    file_name: str | None,
    mime_type: str | None,
    caption: str | None,
    announced_size: int | None,
    ext: str,
) -> dict[str, Any]:
    """A user sends a file of `kind` in their private chat; returns the update."""
    person = objects.user(user_id, "Owner" if user_id else "User")
    state.chats.chat(user_id, person)
    stored = state.uploads.add(kind, content, announced_size, ext)
    body: dict[str, Any] = {kind: media_object(kind, stored, file_name, mime_type)}
    if kind == "animation":  # Telegram fills `document` too, for older clients
        body["document"] = media_object("document", stored, file_name, mime_type)
    if caption:
        body["caption"] = caption
    message = state.chats.add(user_id, person, body)
    return state.updates.push("message", copy.deepcopy(message.payload))


def send_other(state: State, content: dict[str, Any], *, user_id: int) -> dict[str, Any]:
    """A user sends anything else (a sticker, a location, a poll): `content` as given."""
    person = objects.user(user_id, "Owner")
    state.chats.chat(user_id, person)
    message = state.chats.add(user_id, person, content)
    return state.updates.push("message", copy.deepcopy(message.payload))


def edit_text(state: State, message_id: int, text: str, *, user_id: int) -> dict[str, Any]:
    """A user edits a message of theirs; Telegram sends an edited_message update."""
    stored = state.chats.find(user_id, message_id)
    if stored is None or stored.record is not None:
        raise LookupError(f"the user has no message {message_id}")
    stored.payload["text"] = text
    stored.payload["edit_date"] = stored.payload["date"] + 5
    return state.updates.push("edited_message", copy.deepcopy(stored.payload))


async def get_file(state: State, p: Params) -> Any:
    file_id = p.text("file_id") or ""
    stored = state.uploads.by_id.get(file_id.removesuffix("s"))
    if stored is None:
        raise bad_request("invalid file_id")
    if stored.size > CLOUD_LIMIT and not state.uploads.local_server:
        raise bad_request("file is too big")
    return {
        "file_id": file_id,
        "file_unique_id": "AQAD" + stored.file_id[-6:],
        "file_size": stored.size,
        "file_path": stored.path,
    }


async def download(state: State, request: web.Request) -> web.StreamResponse:
    """GET /file/bot<token>/<file_path>: the bytes, streamed in chunks."""
    stored = state.uploads.by_path.get(request.match_info["path"])
    if stored is None or stored.content is None:
        raise web.HTTPNotFound()
    state.uploads.downloads.append(stored.file_id)
    state.signal.notify()
    response = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
    response.content_length = len(stored.content)
    await response.prepare(request)
    view = memoryview(stored.content)
    for start in range(0, len(view), CHUNK):
        await response.write(bytes(view[start : start + CHUNK]))
        if state.uploads.chunk_delay:
            await asyncio.sleep(state.uploads.chunk_delay)
    await response.write_eof()
    return response


METHODS: dict[str, Method] = {"getfile": get_file}
