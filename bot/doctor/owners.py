"""The doctor's owner check for a channel whose owner the settings do not name."""

from __future__ import annotations

from bot.doctor.report import Finding, failed, ok
from core.config import Settings
from core.errors import StorageError
from core.security.owners import OwnerStore


def check_paired(settings: Settings, channel: str, name: str) -> Finding:
    """The owner who paired on `channel`, or how to pair (optional: the channel runs and asks
    for the code); `name` is the finding's."""
    try:
        owner = OwnerStore(settings.home).get(channel)
    except StorageError as exc:
        return failed(name, str(exc), "remove that file, then pair again")
    if owner is not None:
        return ok(name, f"{owner.owner_id}, paired on {owner.paired_at[:10]}")
    fix = "run `lancelot run` and send the bot the pairing code it prints"
    return failed(
        name, "none yet: the first to send the pairing code becomes it", fix, needed=False
    )
