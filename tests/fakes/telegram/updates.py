"""How updates leave Telegram: a queue read by getUpdates (long polling) or pushed to a webhook."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import TERMINATED_BY_OTHER_POLL, WEBHOOK_IS_ACTIVE, ApiError

if TYPE_CHECKING:
    from .state import Signal

# What Telegram sends when allowed_updates is empty or was never set.
DEFAULT_ALLOWED = frozenset(
    {"message", "edited_message", "channel_post", "edited_channel_post", "business_connection",
     "business_message", "edited_business_message", "deleted_business_messages", "inline_query",
     "chosen_inline_result", "callback_query", "shipping_query", "pre_checkout_query",
     "purchased_paid_media", "poll", "poll_answer", "my_chat_member", "chat_join_request",
     "chat_boost", "removed_chat_boost"}
)  # fmt: skip


@dataclass
class Webhook:
    """A registered webhook and the last delivery failure, as getWebhookInfo reports them."""

    url: str
    secret_token: str | None
    max_connections: int = 40
    last_error_date: int | None = None
    last_error_message: str | None = None


class UpdateQueue:
    """Pending updates in update_id order, with getUpdates' confirmation and conflict rules."""

    def __init__(self, signal: Signal, interrupted: Callable[[], bool]) -> None:
        self.pending: list[dict[str, Any]] = []
        self.webhook: Webhook | None = None
        self.allowed_updates: list[str] | None = None
        self._signal = signal
        self._interrupted = interrupted
        self._ids = itertools.count(10001)
        self._poller: object | None = None

    @property
    def polling(self) -> bool:
        """A getUpdates call is waiting for updates right now."""
        return self._poller is not None

    def push(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create an update; like Telegram, one of a type not allowed is never stored.

        A dropped update comes back without an update_id.
        """
        if kind not in set(self.allowed_updates or DEFAULT_ALLOWED):
            return {kind: body}
        return self.push_raw({kind: body})

    def push_raw(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue an update as given (crafted by a test); gives it an update_id if it has none."""
        update = {"update_id": next(self._ids), **update}
        self.pending.append(update)
        self._signal.notify()
        return update

    def set_allowed(self, allowed: Any) -> None:
        if allowed is not None:
            self.allowed_updates = list(allowed) or None

    def drop_pending(self) -> None:
        self.pending.clear()

    def confirm(self, offset: int | None) -> None:
        """Forget updates before offset; a negative offset keeps only the last -offset ones."""
        if offset is None:
            return
        if offset < 0:
            del self.pending[: max(len(self.pending) + offset, 0)]
        else:
            self.pending = [u for u in self.pending if u["update_id"] >= offset]

    async def get_updates(
        self, offset: int | None, limit: int | None, wait: float, allowed: Any
    ) -> list[dict[str, Any]]:
        """getUpdates: a newer call terminates a waiting one with 409, as Telegram does."""
        if self.webhook is not None:
            raise ApiError(409, WEBHOOK_IS_ACTIVE)
        self.set_allowed(allowed)
        self.confirm(offset)
        ticket = object()
        self._poller = ticket
        self._signal.notify()  # wakes an older poll so it can see it lost
        try:
            await self._signal.wait_until(
                lambda: (
                    bool(self.pending)
                    or self._poller is not ticket
                    or self.webhook is not None
                    or self._interrupted()
                ),
                max(wait, 0),
            )
        except TimeoutError:
            pass
        finally:
            lost = self._poller is not ticket
            if not lost:
                self._poller = None
        if lost:
            raise ApiError(409, TERMINATED_BY_OTHER_POLL)
        if self.webhook is not None:
            raise ApiError(409, WEBHOOK_IS_ACTIVE)
        return self.pending[: min(max(limit or 100, 1), 100)]

    def set_webhook(self, webhook: Webhook | None, drop_pending: bool) -> None:
        self.webhook = webhook
        if drop_pending:
            self.drop_pending()
        self._signal.notify()

    def delivered(self, update: dict[str, Any]) -> None:
        """A webhook answered 2xx: the update is confirmed."""
        self.pending = [u for u in self.pending if u is not update]
        self._signal.notify()
