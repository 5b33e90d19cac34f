"""The Undo desk over changes kept in memory (the sandbox's own need Docker): each Undo
button lives exactly as long as its change can be taken back, /undo lists the five newest,
and every press leaves a receipt that the receipt page shows in the change's request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.web.stories import story_view
from core.commands.registry import CommandContext, CommandRegistry, PressContext
from core.errors import InvalidToken
from core.events import ButtonPress, Card, CardKind, Inbound
from core.governance.undo import UndoDesk
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.security.owner_view import OwnerView
from core.security.tokens import ActionTokens
from core.state import open_state_db
from tests.core.governance.changes import DAY, NOW, Clock, Shelf, deleted


@dataclass
class Desk:
    desk: UndoDesk
    registry: CommandRegistry
    shelf: Shelf
    tokens: ActionTokens
    ledger: SqliteLedger
    clock: Clock

    async def lapses_between(self, token: str, card_id: str, alive: float, dead: float) -> None:
        """The token is refused as expired at NOW + `dead` and redeemed at NOW + `alive`."""
        try:
            self.clock.now = NOW + dead
            with pytest.raises(InvalidToken, match="expired"):
                await self.tokens.redeem(token, "owner", card_id)
            self.clock.now = NOW + alive
            await self.tokens.redeem(token, "owner", card_id)
        finally:
            self.clock.now = NOW

    async def press(self, card: Card, label: str) -> Card:
        """Tap a button as the orchestrator hands a press on: to the handler of its action."""
        (button,) = [b for b in card.buttons if b.label == label]
        grant = await self.tokens.redeem(button.action_token, "owner", card.correlation_id)
        handler = self.registry.press_handler(grant.action)
        assert handler is not None, grant.action
        event = ButtonPress("memory", "owner", "owner", None, button.action_token)
        done = await handler(PressContext(event, grant.payload, grant.card_id, "p1"))
        assert done is not None
        return done

    async def undo_receipts(self) -> list[tuple[str, str, str]]:
        """(kind, action, status) of the undo receipts, oldest first."""
        await self.ledger.flush()
        page = await self.ledger.page(ReceiptQuery(limit=100))
        kinds = ("change_undone", "undo_refused")
        found = [r for r in reversed(page.receipts) if r.action_type in kinds]
        return [(r.action_type, r.action_name, r.status) for r in found]

    async def listing(self) -> Card:
        ctx = CommandContext(Inbound("memory", "owner", "owner", "/undo"), "", "r1")
        return await self.desk.listing(ctx)


@pytest.fixture
async def desk(tmp_path: Path) -> AsyncIterator[Desk]:
    clock = Clock()
    db = await open_state_db(tmp_path / "state.db")
    tokens = ActionTokens(db, b"test-secret-0123456789", clock=clock)
    await tokens.setup()
    shelf = Shelf(*(deleted(n) for n in range(1, 8)))
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        desk = UndoDesk(shelf, tokens, ledger, OwnerView("UTC", now=clock), clock)
        registry = CommandRegistry()
        desk.register(registry)
        yield Desk(desk, registry, shelf, tokens, ledger, clock)
    await db.close()


async def test_an_undo_button_lives_exactly_as_long_as_its_change_can_be_undone(
    desk: Desk,
) -> None:
    button = await desk.desk.button("d2", "card-1")
    assert button is not None
    assert button.label == "Undo"
    await desk.lapses_between(button.action_token, "card-1", DAY - 0.5, DAY + 0.5)
    assert await desk.desk.button("d99", "card-2") is None  # no such change in its window
    again = await desk.desk.button("d2", "card-4")
    assert again is not None
    card = Card(CardKind.REPLY, "/run", "$ rm old2.txt", buttons=(again,), correlation_id="card-4")
    assert (await desk.press(card, "Undo")).title == "Undone"
    assert desk.shelf.changes[1].state == "undone"
    desk.shelf.changes.insert(0, deleted(0, left=0.25))  # its window closes in a moment
    closing = await desk.desk.button("d0", "card-3")
    assert closing is not None
    await desk.lapses_between(closing.action_token, "card-3", 0.9, 1.5)  # a second, no more


async def test_undo_lists_the_five_newest_changes_each_with_its_own_button(desk: Desk) -> None:
    listing = await desk.listing()
    assert listing.title == "Recent changes"
    assert [b.label for b in listing.buttons] == [f"Undo {n}" for n in range(1, 6)]
    assert listing.body.splitlines()[:4] == [
        "1. 07:59 $ rm old1.txt",
        "   It deletes 1 file: old1.txt. Undo until tomorrow 08:00 (in 1 day).",
        "2. 07:58 $ rm old2.txt",
        "   It deletes 1 file: old2.txt. Undo until tomorrow 08:00 (in 1 day).",
    ]
    assert len(listing.body.splitlines()) == 10
    first = listing.buttons[0].action_token
    await desk.lapses_between(first, listing.correlation_id, DAY - 0.5, DAY + 0.5)
    desk.shelf.changes[:2] = [deleted(1, left=0.5)]
    again = await desk.listing()
    await desk.lapses_between(again.buttons[0].action_token, again.correlation_id, 0.9, 1.5)


async def test_help_offers_undo_in_words_and_it_answers_with_the_listing(desk: Desk) -> None:
    (command,) = desk.registry.listing()
    assert (command.name, command.summary) == ("undo", "take back a recent change to your files")
    ctx = CommandContext(Inbound("memory", "owner", "owner", "/undo"), "", "r1")
    listing = await command.handler(ctx)
    assert listing is not None
    assert listing.title == "Recent changes"


async def test_with_nothing_to_undo_the_listing_says_so(desk: Desk) -> None:
    desk.shelf.changes.clear()
    listing = await desk.listing()
    assert (listing.title, listing.body) == ("Nothing to undo", "No recent change can be undone.")
    assert listing.buttons == ()


async def request_made(ledger: SqliteLedger, change: str) -> Receipt:
    """The request whose dry run made `change`, as the ledger holds it."""
    asked = Receipt("inbound", "message", inputs={"text": f"/run rm old{change[1:]}.txt"})
    ledger.append(asked)
    inputs = {"command": "rm old.txt", "dry_run": change}
    ledger.append(Receipt("dry_run", "shell.exec", inputs=inputs, quest_id=asked.id))
    return asked


async def seen_on_the_page(ledger: SqliteLedger, root: Receipt) -> tuple[str, list[str]]:
    """The outcome and lines the receipt page shows for the request `root`."""
    await ledger.flush()
    page = await ledger.stories(None, 10)
    (story,) = [s for s in page.stories if s.root.id == root.id]
    view = story_view(story, UTC, lambda _: "", datetime.fromtimestamp(NOW, UTC))
    return view.outcome, [f"{line.status}: {line.text}" for line in view.lines]


async def test_an_undo_is_told_and_shown_in_the_request_that_made_the_change(desk: Desk) -> None:
    asked = await request_made(desk.ledger, "d1")
    desk.ledger.append(Receipt("button", "change.undo", inputs={"change": "d1"}, id="p1"))
    done = await desk.press(await desk.listing(), "Undo 1")
    assert (done.title, done.body) == (
        "Undone",
        "$ rm old1.txt\nEverything is back as it was before this change, which deletes "
        "1 file: old1.txt.",
    )
    outcome, lines = await seen_on_the_page(desk.ledger, asked)
    assert outcome == "undone"
    assert lines[-1] == "success: undone: deletes 1 file: old1.txt"
    assert await desk.undo_receipts() == [("change_undone", "shell.apply", "success")]


async def test_a_refused_undo_names_why_and_is_shown_refused(desk: Desk) -> None:
    asked = await request_made(desk.ledger, "d1")
    desk.ledger.append(Receipt("button", "change.undo", inputs={"change": "d1"}, id="p1"))
    desk.shelf.touched_later["d1"] = ("notes.md",)
    refused = await desk.press(await desk.listing(), "Undo 1")
    assert (refused.title, refused.body) == (
        "Not undone",
        "Not undone: these files changed after it: notes.md.",
    )
    del desk.shelf.touched_later["d1"]
    earlier, later = await desk.listing(), await desk.listing()
    await desk.press(later, "Undo 1")
    gone = await desk.press(earlier, "Undo 1")  # the same change, from an older card
    assert (gone.title, gone.body) == ("Not undone", "Cannot undo: already undone.")
    _, lines = await seen_on_the_page(desk.ledger, asked)
    assert lines[1:] == [
        "refused: undo refused: these files changed after it: notes.md",
        "success: undone: deletes 1 file: old1.txt",
        "refused: change d1: already undone",
    ]
    assert await desk.undo_receipts() == [
        ("undo_refused", "shell.apply", "refused"),
        ("change_undone", "shell.apply", "success"),
        ("undo_refused", "shell.apply", "refused"),
    ]
