"""A governed action: a capability plus its exact arguments, hashed so approvals bind to it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ToolAction:
    """What is to be done, exactly. Two actions with the same hash are the same action."""

    capability: str
    command: str | None = None
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """sha256 of the canonical JSON of the action."""
        body = json.dumps(
            {"capability": self.capability, "command": self.command, "params": self.params},
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(body.encode()).hexdigest()

    def describe(self) -> str:
        """One line for a card: exactly what will run."""
        return self.command if self.command is not None else f"{self.capability} {self.params}"

    def to_json(self) -> str:
        """Stored form."""
        return json.dumps(
            {"capability": self.capability, "command": self.command, "params": self.params},
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> ToolAction:
        """Back from the stored form."""
        data = json.loads(text)
        return cls(data["capability"], data.get("command"), data.get("params") or {})
