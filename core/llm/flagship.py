"""What the three flagship adapters share: their configuration and small translation helpers."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from core.llm.retry import RetryPolicy
from core.llm.types import Lane

STRUCTURED_TOOL = "respond"  # the forced tool that carries a structured answer (Anthropic)


@dataclass(frozen=True, slots=True)
class FlagshipConfig:
    """One flagship provider as the settings describe it. `api_key` is never logged."""

    name: str
    api_key: str = field(repr=False)
    fast_model: str
    deep_model: str
    base_url: str | None = None
    timeout: float = 60.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def model_for(self, lane: Lane) -> str:
        """The model that serves a flagship lane."""
        return self.deep_model if lane is Lane.FLAGSHIP_DEEP else self.fast_model


def parse_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """Tool arguments as a dict, whether the SDK gave JSON text or an object.

    Models sometimes send broken JSON; the agent loop validates arguments against the tool's
    schema anyway, so the raw text is kept under "_raw" instead of failing the whole call.
    """
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return dict(raw)
    try:
        value = json.loads(raw)
    except ValueError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_value": value}
