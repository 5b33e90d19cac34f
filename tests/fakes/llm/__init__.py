"""Fake OpenAI, Anthropic and Gemini servers that the real SDKs reach through their base URLs."""

from .anthropic import FakeAnthropic
from .base import FakeModelServer, Reply
from .gemini import FakeGemini
from .openai import FakeOpenAI

__all__ = ["FakeAnthropic", "FakeGemini", "FakeModelServer", "FakeOpenAI", "Reply"]
