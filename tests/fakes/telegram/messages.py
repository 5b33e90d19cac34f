"""Bot API methods about messages: send, edit, delete, documents and chat actions."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

from .errors import NOT_MODIFIED, bad_request
from .html_check import EntityParseError, FormattedText, UnsupportedParseMode, format_text
from .objects import check_reply_markup
from .params import Params
from .reply import Method
from .state import ChatAction, SentDocument, SentMessage, StoredMessage
from .state import TelegramState as State

CHAT_ACTIONS = frozenset(
    {"typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice",
     "upload_document", "choose_sticker", "find_location", "record_video_note",
     "upload_video_note"}
)  # fmt: skip


async def send_message(state: State, p: Params) -> Any:
    chat_id = state.chats.resolve(p.values.get("chat_id"))
    text = p.text("text") or ""
    formatted = _formatted(text, p.text("parse_mode"), 4096, "message is too long")
    if not formatted.text:
        raise bad_request("message text is empty")
    markup = check_reply_markup(p.object("reply_markup"))
    stored = state.bot_message(chat_id, _content("text", formatted, markup))
    _record(state, stored, text, p.text("parse_mode"), formatted, markup, document=None)
    return stored.payload


async def edit_message_text(state: State, p: Params) -> Any:
    stored, record = _editable(state, p)
    if record["document"] is not None:
        raise bad_request("there is no text in the message to edit")
    text = p.text("text") or ""
    formatted = _formatted(text, p.text("parse_mode"), 4096, "MESSAGE_TOO_LONG")
    if not formatted.text:
        raise bad_request("message text is empty")
    markup = check_reply_markup(p.object("reply_markup"))
    if _content("text", formatted, markup) == _content_of(stored.payload, "text"):
        raise bad_request(NOT_MODIFIED)
    _apply_edit(stored, _content("text", formatted, markup))
    record["text"], record["parse_mode"] = text, p.text("parse_mode")
    record["plain_text"], record["entities"] = formatted.text, list(formatted.entities)
    record["reply_markup"] = markup
    return stored.payload


async def edit_message_reply_markup(state: State, p: Params) -> Any:
    stored, record = _editable(state, p)
    markup = check_reply_markup(p.object("reply_markup"))
    if markup == stored.payload.get("reply_markup"):
        raise bad_request(NOT_MODIFIED)
    kind = "caption" if record["document"] is not None else "text"
    _apply_edit(stored, {**_content_of(stored.payload, kind), "reply_markup": markup})
    record["reply_markup"] = markup
    return stored.payload


async def delete_message(state: State, p: Params) -> Any:
    chat_id = state.chats.resolve(p.values.get("chat_id"))
    stored = state.chats.find(chat_id, p.integer("message_id"))
    if stored is None:
        raise bad_request("message to delete not found")
    state.chats.remove(chat_id, stored.payload["message_id"])
    if stored.record is not None:
        stored.record["deleted"] = True
    return True


async def send_chat_action(state: State, p: Params) -> Any:
    chat_id = state.chats.resolve(p.values.get("chat_id"))
    action = p.text("action") or ""
    if action not in CHAT_ACTIONS:
        raise bad_request("wrong parameter action in request")
    state.chat_actions.append(ChatAction(chat_id, action))
    return True


async def send_document(state: State, p: Params) -> Any:
    chat_id = state.chats.resolve(p.values.get("chat_id"))
    document = _document(state, p)
    caption = p.text("caption") or ""
    formatted = _formatted(caption, p.text("parse_mode"), 1024, "message caption is too long")
    markup = check_reply_markup(p.object("reply_markup"))
    content = {"document": _document_object(document), **_content("caption", formatted, markup)}
    if not formatted.text:
        content.pop("caption")
    stored = state.bot_message(chat_id, content)
    _record(state, stored, caption, p.text("parse_mode"), formatted, markup, document)
    return stored.payload


async def send_photo(state: State, p: Params) -> Any:
    chat_id = state.chats.resolve(p.values.get("chat_id"))
    photo = _document(state, p, "photo")
    caption = p.text("caption") or ""
    formatted = _formatted(caption, p.text("parse_mode"), 1024, "message caption is too long")
    markup = check_reply_markup(p.object("reply_markup"))
    size = {"width": 1280, "height": 853}
    content = {
        "photo": [{**_document_object(photo), **size}],
        **_content("caption", formatted, markup),
    }
    if not formatted.text:
        content.pop("caption")
    stored = state.bot_message(chat_id, content)
    _record(state, stored, caption, p.text("parse_mode"), formatted, markup, None, photo)
    return stored.payload


def _formatted(text: str, parse_mode: str | None, limit: int, too_long: str) -> FormattedText:
    try:
        formatted = format_text(text, parse_mode)
    except EntityParseError as exc:
        raise bad_request(f"can't parse entities: {exc}") from None
    except UnsupportedParseMode:
        raise bad_request("unsupported parse_mode") from None
    if len(formatted.text) > limit:
        raise bad_request(too_long)
    return formatted


def _content(kind: str, formatted: FormattedText, markup: dict[str, Any] | None) -> dict[str, Any]:
    """The text part of a Message: text/caption, entities and inline keyboard, when present."""
    content: dict[str, Any] = {kind: formatted.text}
    if formatted.entities:
        content["entities" if kind == "text" else "caption_entities"] = list(formatted.entities)
    if markup is not None:
        content["reply_markup"] = markup
    return content


def _content_of(payload: dict[str, Any], kind: str) -> dict[str, Any]:
    keys = (kind, "entities" if kind == "text" else "caption_entities", "reply_markup")
    return {key: payload[key] for key in keys if key in payload}


def _apply_edit(stored: StoredMessage, content: dict[str, Any]) -> None:
    for key in ("text", "entities", "caption", "caption_entities", "reply_markup"):
        stored.payload.pop(key, None)
    stored.payload.update({k: v for k, v in content.items() if v is not None})
    stored.payload["edit_date"] = int(time.time())
    if stored.record is not None:
        stored.record["edits"] += 1


def _editable(state: State, p: Params) -> tuple[StoredMessage, SentMessage]:
    if p.values.get("inline_message_id"):
        raise bad_request("MESSAGE_ID_INVALID")
    chat_id = state.chats.resolve(p.values.get("chat_id"))
    stored = state.chats.find(chat_id, p.integer("message_id"))
    if stored is None:
        raise bad_request("message to edit not found")
    if stored.record is None:
        raise bad_request("message can't be edited")
    return stored, stored.record


def _record(
    state: State,
    stored: StoredMessage,
    text: str,
    parse_mode: str | None,
    formatted: FormattedText,
    markup: dict[str, Any] | None,
    document: SentDocument | None,
    photo: SentDocument | None = None,
) -> None:
    stored.record = SentMessage(
        chat_id=stored.payload["chat"]["id"],
        message_id=stored.payload["message_id"],
        text=text,
        parse_mode=parse_mode,
        plain_text=formatted.text,
        entities=list(formatted.entities),
        reply_markup=markup,
        document=document,
        photo=photo,
        edits=0,
        deleted=False,
    )
    state.sent.append(stored.record)


def _document(state: State, p: Params, field: str = "document") -> SentDocument:
    value = p.values.get(field)
    name = value.removeprefix("attach://") if isinstance(value, str) else field
    upload = p.files.get(name) or p.files.get(field)
    if upload is not None:
        if not upload.content:
            raise bad_request("file must be non-empty")
        file_id = f"BQACAgIAAxkBAAI{next(state.ids):06d}"
        document = SentDocument(
            file_id=file_id,
            file_name=upload.filename,
            mime_type=upload.content_type,
            content=upload.content,
        )
        state.files[file_id] = document
        return document
    if not isinstance(value, str) or not value:
        raise bad_request(f"there is no {field} in the request")
    if value in state.files:
        return state.files[value]
    if urlsplit(value).scheme in ("http", "https"):
        file_name = urlsplit(value).path.rsplit("/", 1)[-1] or None
        return SentDocument(
            file_id=f"BQACAgIAAxkBAAI{next(state.ids):06d}",
            file_name=file_name,
            mime_type=None,
            content=None,
        )
    raise bad_request("wrong file identifier/HTTP URL specified")


def _document_object(document: SentDocument) -> dict[str, Any]:
    result: dict[str, Any] = {
        "file_id": document["file_id"],
        "file_unique_id": "AgAD" + document["file_id"][-6:],
    }
    if document["file_name"]:
        result["file_name"] = document["file_name"]
    if document["mime_type"]:
        result["mime_type"] = document["mime_type"]
    if document["content"] is not None:
        result["file_size"] = len(document["content"])
    return result


METHODS: dict[str, Method] = {
    "sendmessage": send_message,
    "editmessagetext": edit_message_text,
    "editmessagereplymarkup": edit_message_reply_markup,
    "deletemessage": delete_message,
    "sendchataction": send_chat_action,
    "senddocument": send_document,
    "sendphoto": send_photo,
}
