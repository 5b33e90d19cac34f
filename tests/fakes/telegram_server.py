"""Shorthand import for the fake Telegram Bot API server (it lives in tests.fakes.telegram)."""

from tests.fakes.telegram import FakeTelegram

__all__ = ["FakeTelegram"]
