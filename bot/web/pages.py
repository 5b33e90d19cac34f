"""What every page of the viewer shares: its templates, the sign-in check, and how a page,
a message or a refusal is rendered (never cached: the pages show private data)."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from aiohttp import web
from multidict import MultiMapping

from bot.web.stories import preview
from core.security.viewer_access import ViewerAccess

if TYPE_CHECKING:
    import jinja2

SESSION_COOKIE = "lancelot_session"
MAX_FIELD_CHARS = 200
ASK_AGAIN = "Ask for a new link with /receipts in chat, or run `lancelot link` where Lancelot runs."


def receipt_url(receipt_id: str) -> str:
    """The detail page of a receipt."""
    return "/receipts/" + quote(receipt_id, safe="")


def text_field(query: MultiMapping[str], name: str) -> str | None:
    """A text parameter of the page's address, trimmed and bounded; None when empty."""
    value = query.get(name, "").strip()[:MAX_FIELD_CHARS]
    return value or None


def _templates() -> jinja2.Environment:
    import jinja2  # here, not at the top: an idle process renders no page (about 9 MB)

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("bot.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["receipt_url"] = receipt_url
    env.filters["in_words"] = preview  # a receipt as its kind reads (the registry's line)
    env.filters["thousands"] = lambda n: f"{n:,}"
    return env


class PageKit:
    """Rendering and the session check, one of each for every view."""

    def __init__(self, access: ViewerAccess) -> None:
        self.access = access

    @cached_property
    def _templates(self) -> jinja2.Environment:
        """The templates, loaded for the first page rendered."""
        return _templates()

    def signed_in(self, request: web.Request) -> bool:
        """The browser holds a live session (from a one-time link the owner opened)."""
        return self.access.check_session(request.cookies.get(SESSION_COOKIE))

    def unauthorized(self, message: str, refresh: str = "") -> web.Response:
        """401, saying how to get in."""
        return self.message(401, "Sign-in needed", message, hint=ASK_AGAIN, refresh=refresh)

    def message(
        self, status: int, title: str, message: str, hint: str = "", refresh: str = ""
    ) -> web.Response:
        """A page that only says something."""
        return self.render(
            "message.html",
            status=status,
            title=title,
            message=message,
            hint=hint,
            refresh=refresh,
        )

    def render(self, name: str, status: int = 200, **context: Any) -> web.Response:
        """A template as an uncached HTML page."""
        html = self._templates.get_template(name).render(**context)
        return web.Response(
            text=html,
            status=status,
            content_type="text/html",
            headers={"Cache-Control": "no-store"},
        )
