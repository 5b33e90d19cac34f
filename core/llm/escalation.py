"""When a flagship_fast request deserves flagship_deep: risk words, size, or several steps."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.llm.types import CompletionRequest, Role

# Words whose mistakes are costly: the deeper model reads these requests.
RISK_WORDS = re.compile(
    r"(?i)\b(?:delete|remove|rm|drop|truncate|wipe|erase|destroy|overwrite|force[- ]push|"
    r"deploy|production|prod|migrate|migration|rollback|payment|invoice|transfer|bank|"
    r"password|credential|secret|private key|security|vulnerab\w*|legal|contract|medical|"
    r"irreversible|permanent\w*|sudo|chmod|firewall)\b"
)
_STEP_LINE = re.compile(r"(?m)^\s*(?:\d+[.)]|[-*])\s+\S")
_SEQUENCERS = re.compile(r"(?i)\b(?:then|after that|afterwards|finally|next)\b")


@dataclass(frozen=True, slots=True)
class EscalationPolicy:
    """Thresholds for going deep; the reason is kept in the RouterDecision."""

    deep_over_chars: int = 4000
    steps_for_deep: int = 3

    def reason(self, request: CompletionRequest) -> str | None:
        """Why this request should go to the deep lane, or None to stay fast."""
        size = sum(len(m.content) for m in request.messages)
        if size > self.deep_over_chars:
            return f"complexity: {size} characters of context"
        ask = _last_user_text(request)
        risk = RISK_WORDS.search(ask)
        if risk:
            return f"risk keyword {risk.group().lower()!r}"
        steps = len(_STEP_LINE.findall(ask)) + len(_SEQUENCERS.findall(ask))
        if steps >= self.steps_for_deep:
            return f"complexity: {steps} steps"
        return None


def _last_user_text(request: CompletionRequest) -> str:
    """What the owner asked last (system prompts name risky words on purpose; they don't count)."""
    for message in reversed(request.messages):
        if message.role is Role.USER:
            return message.content
    return ""
