"""The fake Chat's records: messages as spaces show them, injected faults, error answers."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .cards import buttons


@dataclass(frozen=True, slots=True)
class Fault:
    """An injected failure for the next Chat API call: `after` means the message was made
    before the error (the answer was lost), so only requestId prevents a duplicate."""

    status: int
    after: bool = False
    retry_after: str | None = None


@dataclass
class StoredMessage:
    """A message as the space shows it."""

    name: str
    space: str
    thread: str
    body: dict[str, Any]
    via: str  # "api", "webhook" or "answer" (a synchronous reply to an event)
    request_id: str = ""
    edits: int = 0
    created: float = field(default_factory=time.time)


def content(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k in ("text", "cardsV2", "fallbackText")}


def all_actions(body: dict[str, Any]) -> list[str]:
    return [b["text"] for b in buttons(body) if "action" in b.get("onClick", {})]


def error(status: int, text: str) -> web.Response:
    return web.json_response({"error": {"code": status, "message": text}}, status=status)


def fault_response(fault: Fault) -> web.Response:
    headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
    return web.json_response(
        {"error": {"code": fault.status}}, status=fault.status, headers=headers
    )
