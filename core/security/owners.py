"""Owners who paired, kept in LANCELOT_HOME/owners.json (0600, replaced atomically).

One entry per channel: who (the platform's user id or email), their display name, and when
they paired. Settings always win over this file: it is read only for a channel whose owner
the settings leave unset.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from core.errors import StorageError
from soul.atomic import write_atomic

FILE = "owners.json"


@dataclass(frozen=True, slots=True)
class PairedOwner:
    """An owner who sent the pairing code."""

    channel: str
    owner_id: str  # Telegram: the numeric user id; Google Chat: the email, lower case
    name: str
    paired_at: str  # ISO 8601, UTC


class OwnerStore:
    """Reads and writes owners.json; the only code that touches it."""

    def __init__(self, home: Path) -> None:
        self.path = home / FILE

    def load(self) -> dict[str, PairedOwner]:
        """Every paired owner by channel; none when the file does not exist. Raises
        StorageError when it cannot be read or is not what this module writes."""
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return {c: PairedOwner(channel=c, **fields) for c, fields in raw["owners"].items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            problem = f"{self.path} cannot be read ({exc}); remove it to pair again"
            raise StorageError(problem) from None

    def get(self, channel: str) -> PairedOwner | None:
        """The paired owner of `channel`, if any."""
        return self.load().get(channel)

    def save(self, owner: PairedOwner) -> None:
        """Keep `owner` as its channel's paired owner (replacing any earlier one)."""
        owners = self.load()
        owners[owner.channel] = owner
        self._write(owners)

    def forget(self, channel: str | None = None) -> tuple[PairedOwner, ...]:
        """Forget the paired owner of `channel` (None: of every channel); those forgotten."""
        owners = self.load()
        gone = tuple(o for c, o in owners.items() if channel is None or c == channel)
        if gone:
            self._write({c: o for c, o in owners.items() if o not in gone})
        return gone

    def _write(self, owners: dict[str, PairedOwner]) -> None:
        body = {
            "owners": {
                c: {k: v for k, v in asdict(o).items() if k != "channel"} for c, o in owners.items()
            }
        }
        write_atomic(self.path, json.dumps(body, indent=2))  # mkstemp: 0600 at once
