"""What the watchdog keeps from the settings: where to look, how long to wait, and how to
reach the owner. Nothing else (no model key, no server secret) is kept."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from core.config import Settings
from core.errors import ConfigError

CHECK_AT_MOST = 5.0  # seconds between two reads of the heartbeat, at most


@dataclass(frozen=True, slots=True)
class TelegramAddress:
    """The Bot API and the owner: TELEGRAM_OWNER_ID, else the owner who paired."""

    base_url: str
    token: SecretStr
    owner_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GchatAddress:
    """Google Chat push: an incoming webhook, or the Chat API as the app into GCHAT_SPACE."""

    webhook_url: SecretStr | None
    service_account_file: Path | None
    space: str | None
    api_base_url: str


@dataclass(frozen=True, slots=True)
class WatchdogConfig:
    """Everything the watchdog runs on."""

    home: Path
    after: float  # seconds of silence before the owner is told
    telegram: TelegramAddress | None
    gchat: GchatAddress | None
    zone: str = "UTC"  # the owner's timezone (settings, else this machine's), for its times

    @property
    def check_every(self) -> float:
        """Seconds between two reads of the heartbeat: a quarter of the limit, at most 5."""
        return min(CHECK_AT_MOST, self.after / 4)


def watchdog_config(settings: Settings) -> WatchdogConfig:
    """The watchdog's part of `settings`; ConfigError when it could tell nobody."""
    tg = settings.telegram
    telegram = None
    if tg.bot_token is not None:
        telegram = TelegramAddress(tg.api_base_url, tg.bot_token, tg.owner_ids)
    gc = settings.gchat
    gchat = None
    if gc.webhook_url is not None or (gc.service_account_file is not None and gc.space):
        gchat = GchatAddress(gc.webhook_url, gc.service_account_file, gc.space, gc.api_base_url)
    if telegram is None and gchat is None:
        raise ConfigError(
            "watchdog: no way to reach the owner: set TELEGRAM_BOT_TOKEN (with "
            "TELEGRAM_OWNER_ID, or pair first), or GCHAT_WEBHOOK_URL, or "
            "GCHAT_SERVICE_ACCOUNT_FILE with GCHAT_SPACE"
        )
    return WatchdogConfig(
        home=settings.home.expanduser().resolve(),
        after=settings.watchdog.after_seconds,
        telegram=telegram,
        gchat=gchat,
        zone=settings.owner_timezone,
    )
