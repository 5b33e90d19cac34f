"""The channels Lancelot knows. Adding one is its package and one line in `CHANNELS`."""

from __future__ import annotations

from collections.abc import Iterator

from bot.channels.console.spec import CONSOLE
from bot.channels.gchat.spec import GCHAT
from bot.channels.spec import ChannelSpec
from bot.channels.telegram.spec import TELEGRAM


class ChannelRegistry:
    """Channel descriptors in the order /status, `lancelot pair` and the doctor show them;
    fixed once made (`with_channel` returns a new registry)."""

    def __init__(self, specs: tuple[ChannelSpec, ...]) -> None:
        """Raises ValueError on a name used twice or more than one terminal channel."""
        names = [spec.name for spec in specs]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"channel name used twice: {', '.join(twice)}")
        if sum(spec.terminal for spec in specs) > 1:
            raise ValueError("more than one terminal channel")
        self._specs = specs

    def __iter__(self) -> Iterator[ChannelSpec]:
        return iter(self._specs)

    def with_channel(self, spec: ChannelSpec) -> ChannelRegistry:
        """These channels and `spec` (a test's channel, an embedding program's)."""
        return ChannelRegistry((*self._specs, spec))

    def label(self, name: str) -> str:
        """What the owner reads for the channel `name` (the name itself if unknown)."""
        return next((spec.label for spec in self._specs if spec.name == name), name)

    def paired(self) -> tuple[ChannelSpec, ...]:
        """The channels whose owner is named in the settings or paired."""
        return tuple(spec for spec in self._specs if spec.owner is not None)

    @property
    def terminal(self) -> ChannelSpec | None:
        """The channel of the terminal Lancelot runs in, if one is registered."""
        return next((spec for spec in self._specs if spec.terminal), None)


CHANNELS = ChannelRegistry((CONSOLE, TELEGRAM, GCHAT))
