"""The local_redaction lane: PII and secrets leave a request before it goes to a flagship."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from core.llm.types import CompletionRequest, Message, ToolCall
from core.receipts.redaction import Redactor

EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
# 13-19 digits, optionally grouped by spaces or dashes; kept only if the Luhn check passes.
CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
# A +country number, an (area) number, or three or more separated digit groups; 9-15 digits.
# A bare run of digits is an id or a timestamp, not a phone number.
PHONE = re.compile(
    r"(?<![\w+.-])(?:"
    r"\+\d{1,3}[\s.-]?(?:\(\d{1,4}\)[\s.-]?)?\d{2,5}(?:[\s.-]?\d{2,5}){0,4}"
    r"|\(\d{1,4}\)[\s.-]?\d{2,4}(?:[\s.-]\d{2,4}){1,4}"
    r"|\d{2,4}(?:[\s.-]\d{2,4}){2,5}"
    r")(?![\w.-]?\d)"
)
IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
REMEMBERED = 512  # masked texts kept (a conversation's prompt and turns)
# ...and at most this many characters of them, texts and masks together (about 2 MB): a
# system prompt with memory's context is ~8,000 characters, and each request's differs.
REMEMBERED_CHARS = 1_000_000
IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group())
    return "[CARD]" if _luhn(digits) else match.group()


def _phone(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group())
    if IPV4.fullmatch(match.group()) or not 9 <= len(digits) <= 15:
        return match.group()
    return "[PHONE]"


class PiiRedactor:
    """Deterministic: secrets (core.receipts.redaction), then emails, IBANs, cards, phones.

    Placeholders say what was removed ("[EMAIL]") so the flagship can still reason about
    the text; the local model may help later, but is never needed for this.
    """

    def __init__(self, secrets: Redactor | None = None) -> None:
        self._secrets = secrets or Redactor()
        # Every call of a conversation sends the same system prompt and earlier turns again:
        # masked once, remembered (bounded) until the Redactor learns another secret.
        self._masked: dict[str, str] = {}
        self._chars = 0  # characters held in _masked, keys and values
        self._generation = self._secrets.generation

    def text(self, value: str) -> str:
        """The text with secrets and personal data masked."""
        if self._generation != self._secrets.generation:
            self._masked.clear()
            self._chars = 0
            self._generation = self._secrets.generation
        masked = self._masked.get(value)
        if masked is None:
            masked = self._mask(value)
            self._remember(value, masked)
        return masked

    def _remember(self, value: str, masked: str) -> None:
        """Keep the pair, forgetting the oldest past REMEMBERED texts or REMEMBERED_CHARS."""
        size = len(value) + len(masked)
        if size > REMEMBERED_CHARS // 8:
            return  # one huge text would push out a conversation's worth
        while self._masked and (
            len(self._masked) >= REMEMBERED or self._chars + size > REMEMBERED_CHARS
        ):
            oldest = next(iter(self._masked))
            self._chars -= len(oldest) + len(self._masked.pop(oldest))
        self._masked[value] = masked
        self._chars += size

    def _mask(self, value: str) -> str:
        value = self._secrets.text(value)  # raw and encoded (base64 of a key too)
        value = EMAIL.sub("[EMAIL]", value)
        value = IBAN.sub("[IBAN]", value)
        value = CARD.sub(_card, value)
        return PHONE.sub(_phone, value)

    def value(self, value: Any) -> Any:
        """Mask inside JSON-like data (tool arguments)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in self._secrets.value(value).items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def request(self, request: CompletionRequest) -> CompletionRequest:
        """The same request with every message (and tool call argument) masked."""
        return replace(request, messages=tuple(self._message(m) for m in request.messages))

    def _message(self, message: Message) -> Message:
        calls = tuple(ToolCall(c.id, c.name, self.value(c.arguments)) for c in message.tool_calls)
        return replace(message, content=self.text(message.content), tool_calls=calls)
