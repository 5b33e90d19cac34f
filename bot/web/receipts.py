"""The read-only receipt viewer: list and detail pages behind a one-time link and a cookie."""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from multidict import MultiMapping
from yarl import URL

from bot.web.pages import SESSION_COOKIE, PageKit, text_field
from bot.web.stories import decided_by, local_time, story_view
from core.clock import machine_zone
from core.errors import InvalidToken
from core.receipts import ReceiptQuery, ReceiptStatus, ReceiptStore
from core.security.owner_view import OwnerView
from core.security.viewer_access import ViewerAccess

log = logging.getLogger(__name__)

MAX_ID_CHARS = 128
CHILDREN_SHOWN = 100
TYPES_TTL = 60.0  # the filter menu may lag a new action type by this many seconds
FLAT = "all"  # ?view=all: every receipt, one by one (the first page groups them by request)
STORIES_PER_PAGE = 20
MATCH_CAP = 10_000  # a search counts its matches up to this

# Chat apps fetch links to draw previews; such a fetch must not spend the one-time link.
LINK_PREVIEW_AGENTS = (
    "TelegramBot",
    "Google-PageRenderer",
    "Googlebot",
    "Slackbot",
    "WhatsApp",
    "facebookexternalhit",
    "Discordbot",
    "Twitterbot",
)

_LINK_REFUSED = {
    "used": "This link has already been used.",
    "expired": "This link has expired.",
    "unknown": "This link is not valid.",
}


def _pretty(value: Any) -> str:
    """A decoded JSON column as indented JSON (text that was not JSON stays as it is)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def _is_https(request: web.Request) -> bool:
    # X-Forwarded-Proto can only add the Secure flag, never remove it, so trusting it is safe.
    forwarded = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    return request.secure or forwarded == "https"


def _is_link_preview(request: web.Request) -> bool:
    agent = request.headers.get("User-Agent", "")
    return request.method == "HEAD" or any(bot in agent for bot in LINK_PREVIEW_AGENTS)


def _page_url(query: ReceiptQuery, before_seq: int | None) -> str:
    """The list URL with the same filters, starting below `before_seq` (None: the newest)."""
    params = {
        "view": FLAT,
        "type": query.action_type,
        "status": query.status,
        "q": query.text,
        "before": str(before_seq) if before_seq is not None else None,
    }
    return str(URL("/receipts").with_query({k: v for k, v in params.items() if v}))


class ReceiptViews:
    """Handlers for GET /, /receipts and /receipts/{receipt_id}. `secure_cookies`: the public
    URL is https, so the session cookie is sent over https only (behind a proxy too)."""

    def __init__(
        self,
        ledger: ReceiptStore,
        access: ViewerAccess,
        page_size: int = 50,
        *,
        secure_cookies: bool = False,
        owner: OwnerView | None = None,
    ) -> None:
        self._ledger = ledger
        self._access = access
        self._page_size = page_size
        self._secure = secure_cookies
        self._owner = owner or OwnerView(machine_zone())  # the owner's name and zone
        self._pages = PageKit(access)
        self._types: tuple[float, list[str]] | None = None

    def routes(self) -> list[web.RouteDef]:
        """The viewer's routes (GET, and HEAD through aiohttp's allow_head)."""
        return [
            web.get("/", self.index_page),
            web.get("/receipts", self.list_page),
            web.get("/receipts/{receipt_id}", self.detail_page),
        ]

    async def index_page(self, request: web.Request) -> web.Response:
        """What this is and how to get in: a link from the chat."""
        minutes = max(1, int(self._access.link_ttl) // 60)
        return self._pages.render(
            "index.html",
            signed_in=self._pages.signed_in(request),
            minutes=minutes,
        )

    async def list_page(self, request: web.Request) -> web.Response:
        """Newest-first receipts with type/status/text filters and keyset paging."""
        token = request.query.get("t")
        if token is not None:
            return await self._redeem(request, token)
        if not self._pages.signed_in(request):
            refused = _LINK_REFUSED.get(request.query.get("link", ""))
            return self._pages.unauthorized(
                refused or "You are not signed in to the receipt viewer."
            )
        query = self._query(request.query)
        if query is None:
            return self._pages.message(400, "Bad request", "That page address is not valid.")
        flat = request.query.get("view") == FLAT or query.action_type or query.status
        if not (flat or query.text):
            return await self._stories_page(query)
        try:
            page = await self._ledger.page(query)
            matches = await self._ledger.count_matching(query.text, MATCH_CAP) if query.text else 0
        except sqlite3.OperationalError as exc:  # a search the index cannot read
            log.warning("receipt search refused: %s", exc)
            return self._pages.message(400, "Search not understood", "Try other words.")
        types = await self._action_types()
        if query.action_type and query.action_type not in types:
            types.append(query.action_type)
        return self._pages.render(
            "list.html",
            receipts=page.receipts,
            when=self._when,
            types=types,
            statuses=[status.value for status in ReceiptStatus],
            query=query,
            total=await self._ledger.count(),
            matches=matches,
            match_cap=MATCH_CAP,
            older_url=_page_url(query, page.next_before_seq) if page.next_before_seq else None,
            newest_url=_page_url(query, None) if query.before_seq else None,
        )

    async def _stories_page(self, query: ReceiptQuery) -> web.Response:
        """The first page: one row per request, what it led to folded under it."""
        page = await self._ledger.stories(query.before_seq, STORIES_PER_PAGE)
        deciders = await decided_by(self._ledger, page.stories, named=self._owner.who)
        older = page.next_before_seq
        return self._pages.render(
            "stories.html",
            stories=[story_view(s, self._owner.zone, deciders) for s in page.stories],
            types=await self._action_types(),
            statuses=[status.value for status in ReceiptStatus],
            query=query,
            total=await self._ledger.count(),
            older_url=f"/receipts?before={older}" if older else None,
            newest_url="/receipts" if query.before_seq else None,
        )

    async def detail_page(self, request: web.Request) -> web.Response:
        """One receipt: every field, its JSON pretty-printed, and its place in the chain."""
        if not self._pages.signed_in(request):
            return self._pages.unauthorized("You are not signed in to the receipt viewer.")
        receipt_id = request.match_info["receipt_id"]
        receipt = await self._ledger.get(receipt_id) if len(receipt_id) <= MAX_ID_CHARS else None
        if receipt is None:
            return self._pages.message(404, "Not found", "There is no receipt with that id.")
        parent = await self._ledger.get(receipt.parent_id) if receipt.parent_id else None
        children = await self._ledger.children(receipt.id, limit=CHILDREN_SHOWN)
        checkpoint = self._ledger.latest_checkpoint
        return self._pages.render(
            "detail.html",
            when=self._when,
            total=await self._ledger.count(),
            checkpoint=checkpoint if checkpoint and checkpoint.seq >= receipt.seq else None,
            r=receipt,
            inputs=_pretty(receipt.decoded("inputs")),
            outputs=_pretty(receipt.decoded("outputs")),
            metadata=_pretty(receipt.decoded("metadata")),
            parent=parent,
            children=children,
            more_children=len(children) >= CHILDREN_SHOWN,
        )

    def _when(self, stamp: str) -> str:
        """A receipt's time in the owner's zone."""
        return local_time(stamp, self._owner.zone, datetime.now(UTC))

    async def _redeem(self, request: web.Request, token: str) -> web.Response:
        """Spend a one-time link: set the session cookie, then move to /receipts.

        The answer is a page that refreshes rather than a 302: a SameSite=Strict cookie set
        during a navigation that began on another site (the chat app) would not be sent on
        the redirect, but is sent on a navigation this origin starts itself.
        """
        if _is_link_preview(request):
            return self._pages.message(200, "Receipts", "Open this link in your browser.")
        try:
            session = await self._access.redeem(token)
        except InvalidToken as exc:
            log.info("receipt viewer link refused: %s", exc.reason)
            if self._pages.signed_in(request):
                raise web.HTTPSeeOther("/receipts") from None
            # A browser signed in earlier may not have sent its SameSite=Strict cookie on a
            # navigation from the chat app: look again on a navigation this origin starts.
            return self._pages.unauthorized(
                _LINK_REFUSED.get(exc.reason, _LINK_REFUSED["unknown"]),
                refresh=f"/receipts?link={exc.reason}",
            )
        response = self._pages.render("redeemed.html")
        response.set_cookie(
            SESSION_COOKIE,
            session,
            max_age=int(self._access.session_ttl),
            path="/",
            secure=self._secure or _is_https(request),
            httponly=True,
            samesite="Strict",
        )
        return response

    async def _action_types(self) -> list[str]:
        """The filter menu, cached: listing distinct types reads a whole index."""
        now = time.monotonic()
        if self._types is None or now - self._types[0] > TYPES_TTL:
            self._types = (now, await self._ledger.action_types())
        return list(self._types[1])

    def _query(self, params: MultiMapping[str]) -> ReceiptQuery | None:
        """The page request in the URL, or None when `before` is not a receipt number."""
        before = params.get("before", "").strip()
        if before and not (before.isascii() and before.isdigit() and len(before) <= 18):
            return None
        return ReceiptQuery(
            action_type=text_field(params, "type"),
            status=text_field(params, "status"),
            text=text_field(params, "q"),
            before_seq=int(before) if before else None,
            limit=self._page_size,
        )
