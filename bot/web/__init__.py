"""The aiohttp web app: health endpoints, the read-only receipt viewer, channel webhooks."""

from bot.web.app import build_web_app
from bot.web.pages import SESSION_COOKIE

__all__ = ["SESSION_COOKIE", "build_web_app"]
