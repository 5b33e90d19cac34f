"""Pushing updates to the bot's webhook, with the secret-token header Telegram sends."""

from __future__ import annotations

import time
from http import HTTPStatus
from typing import Any

import aiohttp

from .updates import UpdateQueue

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


async def post_update(
    session: aiohttp.ClientSession, url: str, update: dict[str, Any], secret: str | None
) -> int:
    """POST one update as JSON; returns the HTTP status the bot answered."""
    headers = {SECRET_HEADER: secret} if secret is not None else {}
    async with session.post(url, json=update, headers=headers) as response:
        await response.read()
        return response.status


async def deliver_pending(session: aiohttp.ClientSession, queue: UpdateQueue) -> list[int]:
    """Deliver pending updates in order; stop at the first failure, which stays pending."""
    hook = queue.webhook
    if hook is None:
        raise RuntimeError("no webhook is set: the bot must call setWebhook first")
    statuses: list[int] = []
    for update in list(queue.pending):
        try:
            status = await post_update(session, hook.url, update, hook.secret_token)
        except aiohttp.ClientError as exc:
            hook.last_error_date, hook.last_error_message = int(time.time()), str(exc)
            raise
        statuses.append(status)
        if not 200 <= status < 300:
            hook.last_error_date = int(time.time())
            hook.last_error_message = f"Wrong response from the webhook: {_status_line(status)}"
            break
        queue.delivered(update)
    return statuses


def _status_line(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)
