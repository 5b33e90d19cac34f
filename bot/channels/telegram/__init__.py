"""The Telegram channel (python-telegram-bot v22, long polling or webhook); its descriptor is
`bot.channels.telegram.spec.TELEGRAM`."""

import os

# PTB 22 reports time periods (RetryAfter.retry_after, ...) as timedelta only when opted in;
# otherwise reading them warns. Set before any of them is read.
os.environ.setdefault("PTB_TIMEDELTA", "true")

NAME = "telegram"  # the channel's name on the bus, in receipts and in owners.json
