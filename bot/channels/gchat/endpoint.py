"""`POST /gchat/events`: where Google Chat delivers interaction events, on Lancelot's web app.

Every request must carry a bearer token that verifies (else 401 and a bounded receipt, never
the token); the body must be an event in either format (else 400); events from anyone but
the owner reach nothing (an empty answer and a bounded receipt), except a message while the
channel has no owner yet, which the pairing gate answers. The rest is answered in the
event's own format, possibly with a card, after the channel has handled it.
"""

from __future__ import annotations

import json
import logging
from typing import Protocol

from aiohttp import web

from bot.channels.gchat import NAME
from bot.channels.gchat.events import ChatEvent, EventKind, MalformedEvent, parse_event
from bot.channels.gchat.replies import Reply, answer
from bot.channels.gchat.verify import Unverified
from core.errors import ProviderUnavailable
from core.security.refusals import RefusalLog

log = logging.getLogger(__name__)

PATH = "/gchat/events"


class EventService(Protocol):
    """What the endpoint hands verified events to (the Google Chat channel)."""

    async def verify(self, authorization: str | None) -> None:
        """Raise Unverified unless the header proves the request came from Google Chat."""
        ...

    def is_owner(self, event: ChatEvent) -> bool:
        """Whether the event's user is the owner."""
        ...

    async def handle(self, event: ChatEvent) -> Reply | None:
        """Handle an owner's event; the synchronous answer, if any."""
        ...

    def pairing_open(self, event: ChatEvent) -> bool:
        """Whether a stranger's event goes to pairing (the channel has no owner yet)."""
        ...

    async def pair(self, event: ChatEvent) -> Reply | None:
        """The pairing gate's answer to a stranger's message, if any."""
        ...


class GchatEndpoint:
    """Made before the web app starts (its route must exist then); bound to the running
    channel later. Until bound it answers 503, which Google Chat reports as unavailable."""

    def __init__(self, path: str = PATH) -> None:
        self.path = path
        self._service: EventService | None = None
        self._refusals: RefusalLog | None = None

    def routes(self) -> list[web.RouteDef]:
        """The route to add to the web app."""
        return [web.post(self.path, self.handle)]

    def bind(self, service: EventService, refusals: RefusalLog) -> None:
        """Start handing events to `service`."""
        self._service, self._refusals = service, refusals

    def unbind(self) -> None:
        """Stop accepting events (503 again)."""
        self._service = None

    async def handle(self, request: web.Request) -> web.Response:
        """Verify, parse, check the owner, then let the channel answer."""
        service, refusals = self._service, self._refusals
        if service is None or refusals is None:
            return web.Response(status=503, text="not ready")
        try:
            await service.verify(request.headers.get("Authorization"))
        except Unverified as exc:
            refusals.record(
                "unverified",
                exc.reason,
                f"{NAME}:{request.remote}:{exc.reason}",
                {"channel": NAME, "reason": exc.reason},
            )
            return web.Response(status=401, text="unauthorized")
        except ProviderUnavailable as exc:
            log.warning("%s", exc)
            return web.Response(status=503, text="cannot verify requests right now")
        event = await _event_of(request, refusals)
        if event is None:
            return web.Response(status=400, text="not an interaction event")
        if event.kind in (EventKind.MESSAGE, EventKind.CLICK, EventKind.ADDED) and (
            not service.is_owner(event)
        ):
            if service.pairing_open(event):  # the gate keeps its own bounded receipts
                return web.json_response(answer(event.format, await service.pair(event)))
            _refuse(event, refusals)
            return web.json_response({})
        return web.json_response(answer(event.format, await service.handle(event)))


async def _event_of(request: web.Request, refusals: RefusalLog) -> ChatEvent | None:
    body = await request.read()
    try:
        return parse_event(json.loads(body))
    except (ValueError, UnicodeDecodeError) as exc:
        reason = str(exc) if isinstance(exc, MalformedEvent) else "not JSON"
        source = f"{NAME}:{request.remote}:malformed"
        refusals.record("webhook", "malformed", source, {"channel": NAME, "reason": reason})
        return None


def _refuse(event: ChatEvent, refusals: RefusalLog) -> None:
    kind = "button" if event.kind is EventKind.CLICK else "message"
    sender = event.user_email or "unknown"
    log.info("gchat: ignored a %s from a stranger", kind)
    refusals.record(
        "stranger",
        kind,
        f"{NAME}:{sender}",
        {"channel": NAME, "sender_id": sender, "chat_id": event.space},
    )
