"""`lancelot pair`: who owns each channel and how; `--reset` forgets the owners who paired."""

from __future__ import annotations

import argparse

from bot.channels.registry import CHANNELS, ChannelRegistry
from core.config import Settings
from core.security.owners import OwnerStore, PairedOwner


def add_pair_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `pair [--reset]` to the CLI."""
    pair = commands.add_parser("pair", help="who the owner is; --reset forgets a paired owner")
    pair.add_argument(
        "--reset", action="store_true", help="forget the paired owners, so pairing starts again"
    )


def run_pair(
    settings: Settings, args: argparse.Namespace, channels: ChannelRegistry = CHANNELS
) -> int:
    """Show or reset the owners of `channels`; its exit code."""
    store = OwnerStore(settings.home)
    if not args.reset:
        for line in _owners(settings, store.load(), channels):
            print(line)
        return 0
    gone = store.forget()
    for owner in gone:
        print(f"Forgot the paired {channels.label(owner.channel)} owner {_who(owner)}.")
    if not gone:
        print("No paired owner to forget.")
    for setting, value, label in _configured(settings, channels).values():
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


def _configured(settings: Settings, channels: ChannelRegistry) -> dict[str, tuple[str, str, str]]:
    """The owners the settings name, by channel: (variable, value, channel label)."""
    found = {}
    for spec in channels.paired():
        assert spec.owner is not None  # paired(): the channels with an owner setting
        ids = spec.owner.ids(settings)
        if ids:
            found[spec.name] = (spec.owner.variable, ",".join(ids), spec.label)
    return found


def _owners(
    settings: Settings, paired: dict[str, PairedOwner], channels: ChannelRegistry
) -> list[str]:
    configured = _configured(settings, channels)
    lines = []
    for spec in channels.paired():
        owner = paired.get(spec.name)
        if spec.name in configured:
            var, value, _ = configured[spec.name]
            lines.append(f"{spec.label}: {value} (from the settings, {var})")
        elif owner is not None:
            lines.append(f"{spec.label}: {_who(owner)}")
        else:
            lines.append(f"{spec.label}: no owner yet (`lancelot run` prints a pairing code)")
    return lines
