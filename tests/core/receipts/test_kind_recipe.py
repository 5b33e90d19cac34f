"""docs/architecture.md, "How to add a receipt kind", followed step by step: one line in the
registry and the receipt page and the digest know the new kind by its role."""

from __future__ import annotations

import time
from datetime import UTC
from pathlib import Path

from bot.web.stories import decided_by, story_view
from core.digest.collect import collect
from core.receipts.kinds import ReceiptKind, Role
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.receipts.registry import KINDS

# Step 1: the one line (here added to a copy of KINDS, as the line in registry.py would).
BOOKED = ReceiptKind("calendar_booked", Role.EFFECT, "a calendar event booked", "booked: {subject}")


async def test_a_kind_added_by_the_recipe_is_read_by_the_page_and_the_digest(
    tmp_path: Path,
) -> None:
    assert KINDS.unregistered(["calendar_booked"]) == ["calendar_booked"]  # before the line
    kinds = KINDS.plus(BOOKED)
    since = time.time() - 1
    async with SqliteLedger(tmp_path / "ledger.db", kinds=kinds) as ledger:
        # Step 2: write it.
        asked = Receipt("inbound", "message", inputs={"text": "book the dentist"})
        ledger.append(asked)
        ledger.append(
            Receipt(
                "calendar_booked",
                "calendar.book",
                inputs={"command": "dentist, Tuesday 9:00"},
                outputs={"exit_code": 0},
                quest_id=asked.id,
                metadata={"tier": "T2"},
            )
        )
        await ledger.flush()
        page = await ledger.stories(None, 10)
        view = story_view(page.stories[0], UTC, await decided_by(ledger, page.stories), kinds=kinds)
        digest = await collect(ledger, None, since, time.time() + 1, kinds=kinds)
        assert ledger.unregistered == set()  # the suite's guard has nothing to say

    assert view.preview == "book the dentist"
    assert [line.text for line in view.lines] == ["booked: dentist, Tuesday 9:00 (exit 0)"]
    assert view.outcome == "exit 0"  # an effect's exit code is how the request ended
    assert digest.actions_by_tier == {"T2": 1}  # counted among the actions, by tier
