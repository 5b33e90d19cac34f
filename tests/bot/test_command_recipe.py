"""docs/architecture.md, "How to add a command", done exactly as written: a command is one
file, the module of its feature, which fills that feature's router. `/note <text>` keeps a
note, its card's Clear button forgets them, and the word "Notes" alone shows them. Once the
router is included, /help and Telegram's command menu list /note, the owner's phone runs it
with its receipts, and no other router can take it over."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from bot.app import assemble
from core.commands.registry import CommandContext, PressContext, Router
from core.config import load_settings
from core.events import Button, Card, CardKind
from core.security.tokens import ActionTokens
from tests.bot.channels.telegram.harness import OWNER, eventually, running, settings_for
from tests.fakes.telegram import FakeTelegram

CLEAR = "notes.clear"


class Notes:
    """The feature: notes kept in a list (as a notebook would keep them)."""

    def __init__(self, tokens: ActionTokens | None = None) -> None:
        self.kept: list[str] = []
        self.tokens = tokens

    def router(self) -> Router:
        """1. The feature's router: the command, its button, its word."""
        router = Router("notes")
        router.command("note", "keep a short note", self.note, usage="<text>")
        router.action(CLEAR, self.clear)
        router.word("Notes", "note")
        return router

    async def note(self, ctx: CommandContext) -> Card:
        """2. The handler: keep the text (if any); answer with the notes and a Clear button."""
        if ctx.args:
            self.kept.append(ctx.args)
        card = Card(kind=CardKind.REPLY, title="Notes", body="\n".join(self.kept) or "none")
        assert self.tokens is not None
        token = await self.tokens.issue(CLEAR, {}, card.correlation_id)
        return replace(card, buttons=(Button("Clear", token),))

    async def clear(self, ctx: PressContext) -> Card:
        """3. The button: forget the notes; the card is edited to say so."""
        self.kept.clear()
        return Card(kind=CardKind.REPLY, title="Notes", body="cleared")


def edited(tg: FakeTelegram, message_id: int) -> str:
    """What the phone shows now of one of the bot's messages."""
    return next(m["plain_text"] for m in tg.sent if m["message_id"] == message_id)


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


async def test_a_command_added_in_one_file_is_listed_run_and_receipted(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    notes = Notes()
    async with running(tg, settings_for(tg, tmp_path), routers=[notes.router()]) as lancelot:
        notes.tokens = lancelot.app.tokens
        help_card = await lancelot.say("/help")
        kept = await lancelot.say("/note buy milk")
        kept_text = kept["plain_text"]  # the message is edited in place once Clear is tapped
        shown = await lancelot.say("notes!")
        shown_text = shown["plain_text"]
        clear = kept["reply_markup"]["inline_keyboard"][0][0]["callback_data"]  # type: ignore[index]
        tg.press_button(kept["message_id"], clear, user_id=OWNER)
        await eventually(lambda: edited(tg, kept["message_id"]) == "Notes\n\ncleared")
        commands = await lancelot.receipts("command")
        buttons = await lancelot.receipts("button")

    assert "/note <text> - keep a short note" in help_card["plain_text"]
    assert ("note", "keep a short note") in [(c["command"], c["description"]) for c in tg.commands]
    assert kept_text == "Notes\n\nbuy milk"
    assert shown_text == "Notes\n\nbuy milk"  # the word alone ran /note
    assert notes.kept == []
    assert sorted(r.action_name for r in commands) == ["help", "note", "note"]
    assert [r.action_name for r in buttons] == [CLEAR]


async def test_no_other_router_can_take_the_command_over(tmp_path: Path) -> None:
    thief = Router("thief")
    thief.command("note", "not yours", Notes().note)
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home")})
    with pytest.raises(ValueError, match=r"/note \(notes\)"):
        async with assemble(settings, web=False, routers=[Notes().router(), thief]):
            pass
