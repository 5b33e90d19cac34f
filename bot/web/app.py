"""Builds the aiohttp app: health endpoints, the receipt viewer, read-only by default.

Channels add their own routes afterwards (`app.router.add_post(...)`) or through `routes=`;
only routes registered for a method accept it, every other non-GET/HEAD request gets a 405.
"""

from __future__ import annotations

from collections.abc import Iterable

from aiohttp import web
from aiohttp.typedefs import Handler

from bot.web.receipts import ReceiptViews
from core.health.snapshot import HealthMonitor
from core.receipts import ReceiptStore
from core.security.owner_view import OwnerView
from core.security.viewer_access import ViewerAccess

SAFE_METHODS = frozenset({"GET", "HEAD"})

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


def build_web_app(
    *,
    ledger: ReceiptStore,
    access: ViewerAccess,
    health: HealthMonitor,
    page_size: int = 50,
    routes: Iterable[web.AbstractRouteDef] = (),
    secure_cookies: bool = False,
    owner: OwnerView | None = None,
) -> web.Application:
    """The web app with /health/live, /health/ready, /, /receipts and any extra `routes`;
    `secure_cookies` when the public URL is https; times in the `owner`'s zone (None: this
    machine's)."""
    app = web.Application(middlewares=[read_only])
    app.on_response_prepare.append(add_security_headers)
    app.router.add_routes(health_routes(health))
    views = ReceiptViews(ledger, access, page_size, secure_cookies=secure_cookies, owner=owner)
    app.router.add_routes(views.routes())
    app.router.add_routes(routes)
    return app


def health_routes(health: HealthMonitor) -> list[web.RouteDef]:
    """Liveness (the process answers) and readiness (the health checks pass)."""

    async def live(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"}, headers={"Cache-Control": "no-store"})

    async def ready(request: web.Request) -> web.Response:
        snapshot = await health.snapshot()
        return web.json_response(
            snapshot.as_json(),
            status=200 if snapshot.ready else 503,
            headers={"Cache-Control": "no-store"},
        )

    return [web.get("/health/live", live), web.get("/health/ready", ready)]


@web.middleware
async def read_only(request: web.Request, handler: Handler) -> web.StreamResponse:
    """405 for any method a route was not explicitly registered for (unknown paths too)."""
    if request.method not in SAFE_METHODS:
        error = request.match_info.http_exception
        if error is not None:
            allowed = (
                error.allowed_methods
                if isinstance(error, web.HTTPMethodNotAllowed)
                else SAFE_METHODS
            )
            raise web.HTTPMethodNotAllowed(request.method, allowed)
    return await handler(request)


async def add_security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """CSP, nosniff, no framing and no referrer on every response, error pages included."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
