"""Routers: each feature's commands, buttons, words and text, included once; nothing can take
over what another router holds, and /help's order is the routers' order."""

from __future__ import annotations

import pytest

from core.commands.registry import CommandContext, CommandRegistry, PressContext, Router
from core.events import Card, CardKind, Inbound


async def _hello(ctx: CommandContext) -> Card:
    return Card(kind=CardKind.REPLY, title="hello")


async def _press(ctx: PressContext) -> Card:
    return Card(kind=CardKind.REPLY, title="pressed")


async def _echo(event: Inbound, text: str, receipt_id: str) -> Card:
    return Card(kind=CardKind.REPLY, title=text)


def router(name: str, *commands: str, actions: tuple[str, ...] = ()) -> Router:
    made = Router(name)
    for command in commands:
        made.command(command, f"the {command} command", _hello)
    for action in actions:
        made.action(action, _press)
    return made


@pytest.mark.parametrize("name", ["Run", "run!", "", "x" * 33, "sp ace", "é"])
def test_a_command_name_telegram_would_refuse_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not a valid command name"):
        Router("bad").command(name, "no", _hello)
    Router("good").command("x" * 32, "the longest Telegram takes", _hello)


def test_a_router_cannot_hold_the_same_command_or_button_twice() -> None:
    twice = router("twice", "ping", actions=("ping.go",))
    with pytest.raises(ValueError, match="/ping is registered twice"):
        twice.command("ping", "again", _hello)
    with pytest.raises(ValueError, match=r"the ping\.go button is registered twice"):
        twice.action("ping.go", _press)
    assert twice.commands["ping"].summary == "the ping command"


def test_a_word_stands_only_for_a_command_of_its_own_router() -> None:
    own = router("own", "crusader")
    own.word("Crusader", "crusader", "on")
    assert own.words == {"crusader": ("crusader", "on")}
    with pytest.raises(ValueError, match="not one of mine"):
        own.word("status", "status")


def test_a_second_router_cannot_take_over_a_command() -> None:
    registry = CommandRegistry()
    registry.include(router("basic", "help", "status"))
    with pytest.raises(ValueError, match=r"claims what is taken: /status \(basic\)"):
        registry.include(router("thief", "status", "other"))
    assert registry.get("other") is None  # refused whole: nothing of it is included
    assert [r.name for r in registry.routers] == ["basic"]


def test_a_second_router_cannot_take_over_a_button_or_a_word() -> None:
    registry = CommandRegistry()
    first = router("approvals", "approvals", actions=("approval.decide",))
    first.word("yes", "approvals")
    registry.include(first)
    with pytest.raises(ValueError, match=r"the approval\.decide button \(approvals\)"):
        registry.include(router("thief", actions=("approval.decide",)))
    worded = router("words", "other")
    worded.word("YES", "other")
    with pytest.raises(ValueError, match="the word 'yes'"):
        registry.include(worded)
    assert registry.parse_word("Yes!") == ("approvals", "")


def test_only_one_router_answers_free_text() -> None:
    registry = CommandRegistry()
    agent = Router("agent")
    agent.answer_free_text(_echo)
    registry.include(agent)
    with pytest.raises(ValueError, match="already answers free text"):
        agent.answer_free_text(_echo)
    other = Router("another agent")
    other.answer_free_text(_echo)
    with pytest.raises(ValueError, match="free text"):
        registry.include(other)
    assert registry.free_text_handler is _echo


def test_a_router_holds_one_conversation_and_names_are_unique() -> None:
    talk = Router("onboarding")
    talk.converse(_echo)
    with pytest.raises(ValueError, match="already holds a conversation"):
        talk.converse(_echo)
    registry = CommandRegistry()
    registry.include(talk)
    with pytest.raises(ValueError, match="already included"):
        registry.include(Router("onboarding"))
    assert registry.conversations == (_echo,)


def test_nothing_is_included_once_frozen() -> None:
    registry = CommandRegistry()
    registry.freeze()
    with pytest.raises(RuntimeError, match="frozen"):
        registry.include(router("late", "late"))
    assert registry.get("late") is None


def test_help_lists_start_help_status_first_then_routers_in_order() -> None:
    registry = CommandRegistry()
    registry.include(router("basic", "help", "status", "receipts"))
    registry.include(router("jobs", "jobs", "remind"))
    registry.include(router("onboarding", "start"))
    listed = [c.name for c in registry.listing()]
    assert listed == ["start", "help", "status", "receipts", "jobs", "remind"]
