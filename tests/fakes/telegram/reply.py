"""The shape of a fake Bot API method: parameters in, a result (maybe with a description) out."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .params import Params
    from .state import TelegramState


@dataclass(frozen=True)
class Reply:
    """A result with Telegram's optional success description ("Webhook was set")."""

    result: Any
    description: str


Method = Callable[["TelegramState", "Params"], Awaitable[Any]]
