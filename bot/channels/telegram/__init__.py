"""The Telegram channel (python-telegram-bot v22, long polling or webhook)."""

import os

# PTB 22 reports time periods (RetryAfter.retry_after, ...) as timedelta only when opted in;
# otherwise reading them warns. Set before any of them is read.
os.environ.setdefault("PTB_TIMEDELTA", "true")

from bot.channels.telegram.application import TelegramTuning
from bot.channels.telegram.channel import TelegramChannel
from bot.channels.telegram.setup import attach_telegram, webhook_endpoint

__all__ = ["TelegramChannel", "TelegramTuning", "attach_telegram", "webhook_endpoint"]
