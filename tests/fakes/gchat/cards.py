"""What the fake Chat accepts as a message: the 32,000-byte cap and well-formed cardsV2."""

from __future__ import annotations

import json
from typing import Any

MESSAGE_LIMIT = 32_000
WIDGETS = {"textParagraph", "decoratedText", "buttonList"}
CARD_TAGS = ("<b>", "</b>", "<i>", "</i>", "<br>", "<u>", "</u>")


class BadMessage(ValueError):
    """Chat would answer 400 INVALID_ARGUMENT."""


def check_message(message: dict[str, Any]) -> None:
    """Raise BadMessage if Chat would refuse the message."""
    size = len(json.dumps(message, ensure_ascii=False).encode())
    if size > MESSAGE_LIMIT:
        raise BadMessage(f"message is {size} bytes, over {MESSAGE_LIMIT}")
    cards = message.get("cardsV2", [])
    if not isinstance(cards, list) or (not cards and not message.get("text")):
        raise BadMessage("a message needs text or cardsV2")
    for entry in cards:
        if not entry.get("cardId") or not isinstance(entry.get("card"), dict):
            raise BadMessage("cardsV2 entries need cardId and card")
        for section in entry["card"].get("sections", []):
            for widget in section.get("widgets", []):
                _check_widget(widget)


def _check_widget(widget: dict[str, Any]) -> None:
    kinds = WIDGETS.intersection(widget)
    if len(kinds) != 1:
        raise BadMessage(f"unknown widget {sorted(widget)}")
    if "buttonList" in widget:
        for button in widget["buttonList"].get("buttons", []):
            on_click = button.get("onClick", {})
            action = on_click.get("action")
            if not button.get("text") or not (action or on_click.get("openLink")):
                raise BadMessage("a button needs text and onClick")
            if action is not None:
                if not action.get("function"):
                    raise BadMessage("an action needs a function")
                for parameter in action.get("parameters", []):
                    if set(parameter) != {"key", "value"} or not isinstance(
                        parameter["value"], str
                    ):
                        raise BadMessage("action parameters are key/value strings")


def texts(message: dict[str, Any]) -> list[str]:
    """Every text a person sees in the message (header, labels, paragraphs), tags undone."""
    out: list[str] = [message.get("text", "")] if message.get("text") else []
    for entry in message.get("cardsV2", []):
        card = entry["card"]
        header = card.get("header", {})
        out.extend(v for k, v in header.items() if k in ("title", "subtitle"))
        for section in card.get("sections", []):
            for widget in section.get("widgets", []):
                if "textParagraph" in widget:
                    out.append(_plain(widget["textParagraph"]["text"]))
                if "decoratedText" in widget:
                    decorated = widget["decoratedText"]
                    out.append(f"{decorated.get('topLabel', '')}: {_plain(decorated['text'])}")
    return out


def buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The message's buttons, in order."""
    found: list[dict[str, Any]] = []
    for entry in message.get("cardsV2", []):
        for section in entry["card"].get("sections", []):
            for widget in section.get("widgets", []):
                found.extend(widget.get("buttonList", {}).get("buttons", []))
    return found


def _plain(text: str) -> str:
    for tag in CARD_TAGS:
        text = text.replace(tag, "\n" if tag == "<br>" else "")
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
