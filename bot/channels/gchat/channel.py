"""The Google Chat channel: verified events in, cards out as cardsV2, owner only.

A card for a space whose event is still waiting for its HTTP answer rides on that answer;
anything later (long work, alerts, digests, the second part of a long card) is pushed with
spaces.messages.create as the app, or through an incoming webhook in push-only setups.
With the API available, a card with buttons is always pushed, so that it has a message name
and can be edited from anywhere (a decision taken in Telegram edits it too). A click waits
briefly for its decision and replaces the card in place (UPDATE_MESSAGE).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, Self

import aiohttp

from bot.channels.gchat import NAME, render
from bot.channels.gchat.certs import CertCache
from bot.channels.gchat.endpoint import GchatEndpoint
from bot.channels.gchat.events import ChatEvent, EventFormat, EventKind
from bot.channels.gchat.exchanges import Exchanges
from bot.channels.gchat.health import PushHealth, certificates_reason
from bot.channels.gchat.push import ChatApi, Thread, WebhookPush, load_credentials
from bot.channels.gchat.replies import Reply, ReplyKind
from bot.channels.gchat.verify import RequestVerifier, Unverified, audience_is_url
from bot.pairing import PairingGate
from core.bus import Bus
from core.config.settings import GChatSettings
from core.errors import DeliveryFailed, DeliveryRejected, LancelotError
from core.events import ButtonPress, Card, FileOffer, Inbound, MessageRef
from core.security.refusals import RefusalLog

log = logging.getLogger(__name__)

THREAD_TTL = 600.0  # seconds a conversation's thread stays the place for replies
SYNC_PREFIX = "sync:"
WEBHOOK_PREFIX = "webhook:"


class GchatChannel:
    """Talks to the owner through a Google Chat app (a Channel and a PartedChannel)."""

    name = NAME

    def __init__(
        self,
        bus: Bus,
        settings: GChatSettings,
        *,
        refusals: RefusalLog,
        endpoint: GchatEndpoint | None = None,
        action_url: str = "",
        owner: str | None = None,
        pairing: PairingGate | None = None,
    ) -> None:
        """`owner`: the owner's email (default GCHAT_OWNER_EMAIL); `pairing`: where a verified
        stranger's message goes while there is none (an owner who pairs is adopted at once)."""
        self._bus = bus
        self._settings = settings
        self._refusals = refusals
        self._endpoint = endpoint
        self._action_url = action_url  # what add-on buttons call (the endpoint URL)
        self._owner = (owner if owner is not None else settings.owner_email or "").strip().lower()
        self._pairing = pairing
        if pairing is not None:
            pairing.bind(self.adopt)
        self._exchanges = Exchanges()
        self._threads: dict[str, tuple[str, float]] = {}
        self._format = EventFormat.CLASSIC
        self._owner_space = ""
        self._verifier: RequestVerifier | None = None
        self._api: ChatApi | None = None
        self._webhook: WebhookPush | None = None
        self._stack: AsyncExitStack | None = None
        self._push = PushHealth(settings.push_failing_seconds)

    @property
    def owner_chat_ids(self) -> tuple[str, ...]:
        """Where unprompted cards go: GCHAT_SPACE, else the space the owner last wrote from,
        else the webhook's own space."""
        if self._settings.space:
            return (self._settings.space,)
        if self._owner_space:
            return (self._owner_space,)
        return ("webhook",) if self._settings.webhook_url is not None else ()

    # lifecycle

    async def __aenter__(self) -> Self:
        async with AsyncExitStack() as stack:
            session = aiohttp.ClientSession()
            stack.push_async_callback(session.close)
            settings = self._settings
            if settings.audience:
                self._verifier = RequestVerifier(
                    settings,
                    CertCache(session, settings.chat_certs_url),
                    CertCache(session, settings.id_token_certs_url),
                )
            if settings.service_account_file is not None:
                credentials = await asyncio.to_thread(
                    load_credentials, settings.service_account_file
                )
                self._api = ChatApi(session, settings.api_base_url, credentials)
            if settings.webhook_url is not None:
                self._webhook = WebhookPush(session, settings.webhook_url.get_secret_value())
            stack.callback(self._exchanges.close_all)
            if self._endpoint is not None:
                self._endpoint.bind(self, self._refusals)
                stack.callback(self._endpoint.unbind)
            self._stack = stack.pop_all()
        log.info("gchat: serving (push: %s)", self._push_kind())
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._stack is not None:
            await self._stack.aclose()
            self._stack = None

    async def health(self) -> str | None:
        """A health check: pushes failing persistently, or events impossible to verify.
        (No receive-staleness check: Chat calls only when the owner writes.)"""
        reasons = [self._push.reason()]
        if self._verifier is not None:
            reasons.append(await certificates_reason(self._verifier.certificates))
        return "; ".join(r for r in reasons if r) or None

    def _push_kind(self) -> str:
        return "chat api" if self._api else "webhook" if self._webhook else "none"

    # events (EventService)

    async def verify(self, authorization: str | None) -> None:
        """Check the request's bearer token (401 for anything that does not verify)."""
        if self._verifier is None:
            raise Unverified("no_audience")
        await self._verifier.verify(authorization)

    def is_owner(self, event: ChatEvent) -> bool:
        """Only GCHAT_OWNER_EMAIL, and only a human."""
        return bool(self._owner) and event.user_is_human and event.user_email == self._owner

    def adopt(self, owner_id: str) -> None:
        """Treat `owner_id` (an email, who just paired) as the owner from now on."""
        self._owner = owner_id.strip().lower()

    def pairing_open(self, event: ChatEvent) -> bool:
        """Whether this stranger's event goes to pairing: a verified human's message while
        the channel has no owner."""
        gate = self._pairing
        return (
            gate is not None
            and not gate.closed
            and event.kind is EventKind.MESSAGE
            and event.user_is_human
            and bool(event.user_email and event.space)
        )

    async def pair(self, event: ChatEvent) -> Reply | None:
        """The pairing gate's answer to a stranger's message: the first card rides on the
        event's answer, any after it (onboarding's first question) are pushed."""
        assert self._pairing is not None
        self._format = event.format
        email = event.user_email.strip().lower()
        exchange = self._exchanges.start(event.space)
        answered = []

        async def reply(card: Card) -> None:
            answered.append(card)
            try:
                await self._bus.send(NAME, event.space, card)
            except LancelotError as exc:
                log.warning("gchat: a pairing answer was not delivered: %s", exc)

        await self._pairing.knock(email, event.space, "", event.text, reply)
        if self._owner == email:
            self._owner_space = event.space
        wait = self._settings.reply_wait_seconds if answered else 0.0
        return await self._exchanges.wait(exchange, wait)

    async def handle(self, event: ChatEvent) -> Reply | None:
        """Publish the owner's message or click; wait briefly for a card to answer with."""
        self._format = event.format
        if not event.space:
            return None
        if event.kind is EventKind.REMOVED:
            log.info("gchat: the app was removed from %s", event.space)
            return None
        self._owner_space = event.space
        if event.thread_name:
            self._threads[event.space] = (event.thread_name, time.monotonic())
        if event.kind is EventKind.CLICK:
            return await self._click(event)
        if event.kind in (EventKind.MESSAGE, EventKind.ADDED):
            text = event.text or ("/start" if event.kind is EventKind.ADDED else "")
            if text or event.files:  # a file alone is answered too (what became of it)
                exchange = self._exchanges.start(event.space)
                inbound = Inbound(
                    NAME, event.user_email, event.space, text, _ref(event), files=event.files
                )
                await self._bus.publish(inbound)
                return await self._exchanges.wait(exchange, self._settings.reply_wait_seconds)
        return None

    async def _click(self, event: ChatEvent) -> Reply | None:
        token = event.parameters.get(render.TOKEN_PARAMETER, "")
        if not token:
            return None
        exchange = self._exchanges.start(
            event.space,
            card_id=event.parameters.get(render.CARD_PARAMETER, ""),
            message_name=event.message_name,
        )
        press = ButtonPress(NAME, event.user_email, event.space, _ref(event), token)
        await self._bus.publish(press)
        return await self._exchanges.wait(exchange, self._settings.click_wait_seconds)

    # Channel

    def _style(self, *, webhook: bool = False) -> render.Style:
        if self._format is EventFormat.ADDON and self._action_url:
            return render.Style(self._action_url, actions=not webhook)
        return render.Style(actions=not webhook)

    def parts(self, card: Card) -> int:
        """Messages this card takes (32,000 bytes each)."""
        return len(render.messages(card, self._style()))

    async def deliver_part(self, chat_id: str, card: Card, part: int) -> MessageRef:
        """Send one part: as the answer to a waiting event, else pushed."""
        count = self.parts(card)
        if not 0 <= part < count:
            raise DeliveryRejected(f"this card has no part {part}")
        exchange = self._exchanges.for_new_message(chat_id)
        if exchange is not None and self._may_answer(card, count):
            message = render.messages(card, self._style())[part]
            if exchange.settle(Reply(ReplyKind.NEW, message)):
                return MessageRef(NAME, chat_id, f"{SYNC_PREFIX}{uuid.uuid4().hex}")
        if self._api is not None:
            message = render.messages(card, self._style())[part]
            created = await self._push.track(
                self._api.create(
                    chat_id,
                    message,
                    request_id=_request_id(chat_id, card, part, message),
                    thread=self._thread_for(chat_id, card),
                )
            )
            return MessageRef(NAME, chat_id, _name_of(created))
        if self._webhook is not None:
            message = render.messages(card, self._style(webhook=True))[part]
            thread = self._thread_for(chat_id, card)
            created = await self._push.track(self._webhook.create(message, thread=thread))
            return MessageRef(NAME, chat_id, WEBHOOK_PREFIX + _name_of(created))
        raise DeliveryRejected(
            "gchat: no way to push a card here (set GCHAT_SERVICE_ACCOUNT_FILE or "
            "GCHAT_WEBHOOK_URL)"
        )

    def _may_answer(self, card: Card, parts: int) -> bool:
        """Whether a card may ride on a waiting event's answer: not one with buttons when it
        could be pushed instead (an answer's message name is never known, so it could not be
        edited from elsewhere), nor a long card whose other parts could not follow."""
        if card.buttons and self._api is not None:
            return False
        return parts == 1 or self._api is not None or self._webhook is not None

    async def deliver(self, chat_id: str, card: Card) -> MessageRef:
        """Send every part; return the last (it carries the buttons)."""
        ref = None
        for part in range(self.parts(card)):
            ref = await self.deliver_part(chat_id, card, part)
        assert ref is not None  # a card has at least one part
        return ref

    async def edit(self, ref: MessageRef, card: Card) -> None:
        """Replace a delivered card: in the answer to its click if one is waiting, else with
        messages.update."""
        message = render.single_message(card, self._style())
        exchange = self._exchanges.for_edit(ref.chat_id, ref.message_id, card.correlation_id)
        if exchange is not None and exchange.settle(Reply(ReplyKind.UPDATE, message)):
            return
        if self._api is not None and ref.message_id.startswith("spaces/"):
            await self._push.track(self._api.update(ref.message_id, message))
            return
        raise DeliveryRejected("gchat: this message cannot be edited (no Chat API message name)")

    async def typing(self, chat_id: str) -> None:
        """Google Chat shows no typing indicator for apps."""

    def fetch_file(self, offer: FileOffer) -> AsyncIterator[bytes]:
        """An attachment the owner uploaded, through the Chat API's media download (the app's
        service account); a Drive file, or no Chat API configured, is refused."""
        if not offer.ref:
            raise DeliveryRejected("a Google Drive file: open it in Drive")
        if self._api is None:
            raise DeliveryRejected("attachments need the Chat API (GCHAT_SERVICE_ACCOUNT_FILE)")
        return self._api.download(offer.ref)

    def _thread_for(self, space: str, card: Card) -> Thread:
        """The conversation's thread if it is recent; else a thread per kind of card."""
        known = self._threads.get(space)
        if known is not None and time.monotonic() - known[1] < THREAD_TTL:
            return Thread(name=known[0])
        return Thread(key=f"lancelot-{card.kind.value}")


def _ref(event: ChatEvent) -> MessageRef | None:
    return MessageRef(NAME, event.space, event.message_name) if event.message_name else None


def _name_of(created: dict[str, Any]) -> str:
    name = created.get("name")
    if not isinstance(name, str) or not name:
        raise DeliveryFailed("gchat: the platform returned no message name")
    return name


def _request_id(space: str, card: Card, part: int, message: render.Message) -> str:
    """The same card part to the same space gets the same id, so a retry after a lost answer
    returns the first message; a fresh copy (new tokens, new title) gets a new one."""
    content = json.dumps(message, sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(f"{space}\n{card.correlation_id}\n{part}\n{content}".encode())
    return f"lancelot-{digest.hexdigest()[:40]}"


def action_url_for(settings: GChatSettings, public_url: str, path: str) -> str:
    """What add-on buttons call: the endpoint URL (the audience, when it is one)."""
    if settings.audience and audience_is_url(settings.audience):
        return settings.audience
    return f"{public_url.rstrip('/')}{path}"
