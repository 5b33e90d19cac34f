"""/run from chat through the assembled app: the sandbox answers, approvals gate it once."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import Lancelot
from core.config import Settings, load_settings
from core.events import CardKind
from core.receipts.base import ReceiptQuery
from core.receipts.model import StoredReceipt
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap


@pytest.fixture
def settings(tmp_path: Path, docker_image: str) -> Settings:
    """The `app` fixture's settings, with the sandbox image the tests built."""
    return load_settings(
        environ={"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_SANDBOX_IMAGE": docker_image}
    )


async def phone_for(app: Lancelot) -> MemoryChannel:
    channel = MemoryChannel()
    await app.attach(channel)
    return channel


async def tool_runs(app: Lancelot) -> list[tuple[str, str]]:
    """(command, runner) of every tool run, oldest first."""
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type="tool_run", limit=100))
    ordered: list[StoredReceipt] = sorted(page.receipts, key=lambda r: r.seq)
    return [(r.decoded("inputs")["command"], r.decoded("metadata")["runner"]) for r in ordered]


async def test_run_ls_answers_from_the_sandbox(app: Lancelot) -> None:
    phone = await phone_for(app)
    (app.home / "workspace" / "notes.txt").write_text("hello")
    listing = await say(app, phone, "/run ls /workspace")
    assert "exit 0" in listing.body
    assert "notes.txt" in listing.body
    # Only a real shell in the sandbox can answer this one (SafeREPL has no `id`).
    who = await say(app, phone, "/run id -un && cat /proc/self/status | grep NoNewPrivs")
    assert "sandbox" in who.body
    assert "NoNewPrivs:\t1" in who.body
    assert [runner for _, runner in await tool_runs(app)] == ["docker", "docker"]


async def test_rm_waits_for_approval_and_approve_runs_it_once_in_the_sandbox(
    app: Lancelot,
) -> None:
    phone = await phone_for(app)
    made = await say(app, phone, "/run touch /workspace/x")
    assert "exit 0" in made.body
    target = app.home / "workspace" / "x"
    assert target.exists()
    card = await say(app, phone, "/run rm /workspace/x")
    assert card.kind is CardKind.APPROVAL
    assert [b.label for b in card.buttons] == ["Approve", "Deny"]
    assert target.exists()  # nothing ran before the tap
    await tap(app, phone, card, "Approve")
    assert not target.exists()
    _, edited = phone.edits[-1]
    assert edited.title.startswith("Executed")
    assert "exit 0" in edited.body
    await tap(app, phone, card, "Approve")  # a replay does nothing
    # Both were dry-run in the sandbox first; what ran for real is the apply of each.
    assert await tool_runs(app) == [
        ("touch /workspace/x", "docker_dry_run"),
        ("rm /workspace/x", "docker_dry_run"),
    ]
