"""Bot API errors exactly as Telegram sends them: HTTP status equals error_code."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from aiohttp import web

TERMINATED_BY_OTHER_POLL = (
    "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running"
)
WEBHOOK_IS_ACTIVE = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)
NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly "
    "the same as a current content and reply markup of the message"
)
QUERY_TOO_OLD = "query is too old and response timeout expired or query ID is invalid"


class ApiError(Exception):
    """A failed Bot API call; 5xx ones come from the front proxy, so their body is not JSON."""

    def __init__(
        self, code: int, description: str, parameters: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"{code} {description}")
        self.code = code
        self.description = description
        self.parameters = parameters

    def response(self) -> web.Response:
        if self.code >= 500:
            return web.Response(status=self.code, text=self.description, content_type="text/html")
        body: dict[str, Any] = {
            "ok": False,
            "error_code": self.code,
            "description": self.description,
        }
        if self.parameters:
            body["parameters"] = self.parameters
        return web.json_response(body, status=self.code)


def bad_request(detail: str, parameters: dict[str, Any] | None = None) -> ApiError:
    """400 with Telegram's "Bad Request: " prefix."""
    return ApiError(400, f"Bad Request: {detail}", parameters)


def injected_error(
    status: int,
    description: str | None = None,
    retry_after: int | None = None,
    migrate_to_chat_id: int | None = None,
) -> ApiError:
    """The error a test asked for, filled in with what Telegram says for that status."""
    if migrate_to_chat_id is not None:
        return bad_request(
            "group chat was upgraded to a supergroup chat",
            {"migrate_to_chat_id": migrate_to_chat_id},
        )
    if status == 429:
        wait = 1 if retry_after is None else retry_after
        text = description or f"Too Many Requests: retry after {wait}"
        return ApiError(429, text, {"retry_after": wait})
    defaults = {
        400: "Bad Request",
        401: "Unauthorized",
        403: "Forbidden: bot was blocked by the user",
        404: "Not Found",
        409: "Conflict",
    }
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    return ApiError(status, description or defaults.get(status, phrase))
