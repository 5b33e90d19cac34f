"""`lancelot pair`: who owns each channel and how; `--reset` forgets the owners who paired."""

from __future__ import annotations

import argparse

from core.config import Settings
from core.security.owners import OwnerStore, PairedOwner

LABELS = {"telegram": "Telegram", "gchat": "Google Chat"}


def add_pair_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `pair [--reset]` to the CLI."""
    pair = commands.add_parser("pair", help="who the owner is; --reset forgets a paired owner")
    pair.add_argument(
        "--reset", action="store_true", help="forget the paired owners, so pairing starts again"
    )


def run_pair(settings: Settings, args: argparse.Namespace) -> int:
    """Show or reset the owners; its exit code."""
    store = OwnerStore(settings.home)
    if not args.reset:
        for line in _owners(settings, store.load()):
            print(line)
        return 0
    gone = store.forget()
    for owner in gone:
        label = LABELS.get(owner.channel, owner.channel)
        print(f"Forgot the paired {label} owner {_who(owner)}.")
    if not gone:
        print("No paired owner to forget.")
    for setting, value, label in _configured(settings):
        print(f"The {label} owner set in the settings ({setting}={value}) is not touched.")
    if gone:
        print(
            "The next person to send the pairing code becomes the owner. If Lancelot is "
            "running, restart it: it prints a new code then."
        )
    return 0


def _who(owner: PairedOwner) -> str:
    name = f"{owner.name}, " if owner.name and owner.name != owner.owner_id else ""
    return f"{owner.owner_id} ({name}paired on {owner.paired_at[:10]})"


def _configured(settings: Settings) -> list[tuple[str, str, str]]:
    """The owners the settings name: (variable, value, channel label)."""
    found = []
    if settings.telegram.owner_ids:
        ids = ",".join(str(i) for i in settings.telegram.owner_ids)
        found.append(("TELEGRAM_OWNER_ID", ids, "Telegram"))
    if settings.gchat.owner_email:
        found.append(("GCHAT_OWNER_EMAIL", settings.gchat.owner_email, "Google Chat"))
    return found


def _owners(settings: Settings, paired: dict[str, PairedOwner]) -> list[str]:
    configured = {
        label: f"{value} (from the settings, {var})" for var, value, label in _configured(settings)
    }
    lines = []
    for channel, label in LABELS.items():
        owner = paired.get(channel)
        if label in configured:
            lines.append(f"{label}: {configured[label]}")
        elif owner is not None:
            lines.append(f"{label}: {_who(owner)}")
        else:
            lines.append(f"{label}: no owner yet (`lancelot run` prints a pairing code)")
    return lines
