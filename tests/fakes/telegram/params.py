"""A Bot API call's parameters, read the way Telegram reads them: query, JSON, form or multipart."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.web_request import FileField

from .errors import bad_request

# Form and query values arrive as text; these hold numbers, flags and JSON-serialized objects.
_INTEGERS = frozenset(
    {"chat_id", "message_id", "offset", "limit", "timeout", "cache_time", "max_connections",
     "reply_to_message_id", "message_thread_id", "user_id", "from_chat_id"}
)  # fmt: skip
_BOOLEANS = frozenset(
    {"show_alert", "drop_pending_updates", "disable_notification", "protect_content",
     "disable_web_page_preview", "allow_sending_without_reply", "disable_content_type_detection"}
)  # fmt: skip
_JSON = frozenset(
    {"reply_markup", "allowed_updates", "commands", "entities", "caption_entities", "scope",
     "link_preview_options", "reply_parameters"}
)  # fmt: skip


@dataclass(frozen=True)
class UploadedFile:
    """A file part of a multipart request."""

    filename: str
    content: bytes
    content_type: str


@dataclass(frozen=True)
class Params:
    """Normalized parameters (JSON-native values) plus uploaded files by part name."""

    values: dict[str, Any]
    files: dict[str, UploadedFile] = field(default_factory=dict)

    @classmethod
    async def from_request(cls, request: web.Request) -> Params:
        values: dict[str, Any] = dict(request.query)
        files: dict[str, UploadedFile] = {}
        if request.content_type == "application/json" and request.can_read_body:
            try:
                body = await request.json()
            except ValueError:
                raise bad_request("can't parse JSON object") from None
            if not isinstance(body, dict):
                raise bad_request("JSON object expected")
            query = {name: _from_text(name, value) for name, value in values.items()}
            return cls({**query, **body})
        for name, value in (await request.post()).items():
            if isinstance(value, FileField):
                content = value.file.read()
                files[name] = UploadedFile(value.filename, content, value.content_type)
            else:
                values[name] = value if isinstance(value, str) else bytes(value).decode()
        return cls({name: _from_text(name, value) for name, value in values.items()}, files)

    def text(self, name: str) -> str | None:
        value = self.values.get(name)
        return None if value is None else str(value)

    def integer(self, name: str) -> int | None:
        value = self.values.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise bad_request(f"invalid {name} specified")
        return int(value)

    def flag(self, name: str) -> bool:
        return bool(self.values.get(name, False))

    def object(self, name: str) -> Any:
        value = self.values.get(name)
        if isinstance(value, str) and value:
            raise bad_request(f"can't parse {name} JSON object")
        return value


def _from_text(name: str, value: str) -> Any:
    if name in _INTEGERS:
        try:
            return int(value)
        except ValueError:
            return value  # e.g. chat_id "@channelname"
    if name in _BOOLEANS:
        return value.lower() in ("true", "1")
    if name in _JSON and value:
        try:
            return json.loads(value)
        except ValueError:
            return value  # stays text; `Params.object` reports it as Telegram does
    return value
