"""A request's story holds the undos of the changes it made: an Undo's receipt is a child
of the press, in no quest, and names the change, which the request's dry run named."""

from __future__ import annotations

from pathlib import Path

from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt, ReceiptStatus


async def test_an_undo_of_a_dry_runs_change_is_in_the_story_that_made_it(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        asked = Receipt("inbound", "message", inputs={"text": "/run rm old.txt"})
        other = Receipt("inbound", "message", inputs={"text": "/run ls"})
        dry_run = {"command": "rm old.txt", "dry_run": "d1"}
        press = Receipt("button", "change.undo", inputs={"change": "d1"})
        for receipt in (
            asked,
            Receipt("dry_run", "shell.exec", inputs=dry_run, quest_id=asked.id),
            other,
            Receipt("tool_run", "shell.exec", quest_id=other.id, inputs={"command": "ls"}),
            press,
            Receipt("undo_refused", "shell.apply", inputs={"change": "d2"}, parent_id=press.id),
            Receipt(
                "change_undone",
                "shell.apply",
                inputs={"change": "d1"},
                outputs={"outcome": "deleted old.txt"},
                parent_id=press.id,
            ),
        ):
            ledger.append(receipt)
        await ledger.flush()
        page = await ledger.stories(None, 10)

    by_root = {story.root.id: story for story in page.stories}
    assert press.id not in by_root  # a press is never a request of its own
    made = by_root[asked.id]
    assert [m.action_type for m in made.members] == ["dry_run", "change_undone"]
    assert made.size == 2
    assert made.members[-1].status == ReceiptStatus.SUCCESS
    assert [m.action_type for m in by_root[other.id].members] == ["tool_run"]  # d2: no one's
