"""A channel's optional abilities are told as isinstance would tell them, once per class."""

from __future__ import annotations

from core.channel import (
    GroupChats,
    PartedChannel,
    PressAnswering,
    answers_presses,
    is_group,
    parted,
)
from core.events import ButtonPress, Card, MessageRef


class Plain:
    async def deliver(self, chat_id: str, card: Card) -> MessageRef:
        return MessageRef("plain", chat_id, "1")


class Parted(Plain):
    def parts(self, card: Card) -> int:
        return 2

    async def deliver_part(self, chat_id: str, card: Card, part: int) -> MessageRef:
        return MessageRef("parted", chat_id, str(part))


class Everything(Parted):
    async def answer_press(self, press: ButtonPress, *, accepted: bool, note: str = "") -> None:
        return None

    def is_group(self, chat_id: str) -> bool:
        return chat_id.startswith("-")


def test_each_ability_is_told_as_isinstance_tells_it() -> None:
    for channel in (Plain(), Parted(), Everything(), Plain(), Everything()):
        assert parted(channel) == isinstance(channel, PartedChannel)
        assert answers_presses(channel) == isinstance(channel, PressAnswering)
    assert [parted(c) for c in (Plain(), Parted(), Everything())] == [False, True, True]
    assert [answers_presses(c) for c in (Plain(), Parted(), Everything())] == [False, False, True]


def test_group_chats_are_only_where_the_channel_can_tell() -> None:
    assert isinstance(Everything(), GroupChats)
    assert is_group(Everything(), "-100")
    assert not is_group(Everything(), "42")
    assert not is_group(Plain(), "-100")
