"""The fake channel (fake_channel.py), added to the registry and nothing else, served by the
real runner: a stranger pairs and stays the owner across a restart, `/run rm -rf` on it
brings an approval card whose buttons work, and its token is masked in the log and the
receipts."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import re
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.app import redactor_for
from bot.channels.registry import CHANNELS, ChannelRegistry
from bot.ledger import LEDGER_FILE
from bot.logs import RedactingFormatter
from bot.runner import serve
from core.config import Settings, load_settings
from core.events import Card, MessageRef
from tests.bot.channels.fake_channel import FakePeer, FakeSettings, fake_spec
from tests.core.tools.effects.support import hand_over
from tests.fakes.lancelot_process import free_port

TOKEN = "fake-token-4f1c9e7a2b"
CODE = re.compile(r"Pairing code for Fake: ([A-Z2-9]{4}-[A-Z2-9]{4})")


def settings_for(home: Path) -> Settings:
    """A home with no real channel configured: the fake is the only one."""
    return load_settings(
        environ={
            "LANCELOT_HOME": str(home),
            "LANCELOT_WEB_PORT": str(free_port()),
            "LANCELOT_SANDBOX_WARM_AT_START": "false",
            "FEATURE_LOCAL_MODEL": "false",
        }
    )


@pytest.fixture(autouse=True)
def _unfreeze() -> Iterator[None]:
    """`serve` freezes its start-up heap and paces the collector; give the test process's
    heap back to the collector, at its own pace."""
    paced = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*paced)


@contextlib.asynccontextmanager
async def serving(
    settings: Settings, registry: ChannelRegistry, peer: FakePeer
) -> AsyncIterator[None]:
    """`lancelot run` in this process with `registry`'s channels, serving the fake channel
    on `peer`, until the block ends."""
    stop = asyncio.Event()
    peer.channel = None
    peer.attached.clear()
    task = asyncio.create_task(serve(settings, mode="run", channels=registry, stop=stop))
    attached = asyncio.create_task(peer.attached.wait())
    await asyncio.wait([task, attached], timeout=60, return_when=asyncio.FIRST_COMPLETED)
    attached.cancel()
    try:
        yield
    finally:
        stop.set()
        assert await asyncio.wait_for(task, 60) == 0


def shown(card: Card) -> str:
    """What the peer reads of a card: its title, body and fields."""
    return "\n".join([card.title, card.body, *(f"{k}: {v}" for k, v in card.fields)])


async def card_with(peer: FakePeer, text: str) -> tuple[MessageRef, Card]:
    """The next card that says `text` (others are skipped)."""
    while True:
        ref, card = await peer.next_card(60)
        print("CARD", shown(card))
        if text in shown(card):
            return ref, card


async def pairing_code(capsys: pytest.CaptureFixture[str]) -> str:
    """The code the runner prints for the fake channel."""
    for _ in range(300):
        found = CODE.search(capsys.readouterr().out)
        if found:
            return found.group(1)
        await asyncio.sleep(0.1)
    raise AssertionError("no pairing code printed for the fake channel")


async def test_a_stranger_pairs_with_the_code_and_stays_owner_after_a_restart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = settings_for(tmp_path / "home")
    peer = FakePeer()
    registry = CHANNELS.with_channel(fake_spec(FakeSettings(token=SecretStr(TOKEN)), peer))
    async with serving(settings, registry, peer):
        code = await pairing_code(capsys)
        await peer.say("ada", code)
        _, greeting = await card_with(peer, "you are my owner")
        await peer.say("ada", "/status")
        _, status = await card_with(peer, "Fake: ada")
    async with serving(settings, registry, peer):
        await peer.say("mallory", code)  # pairing is over: a stranger gets nothing
        await peer.say("ada", "/status")
        _, again = await card_with(peer, "Fake: ada")

    assert "on Fake" in greeting.body
    assert "Fake: ada, paired " in shown(status)
    assert "Fake: ada, paired " in shown(again)
    assert "Pairing code for Fake" not in capsys.readouterr().out  # no pairing the 2nd time


async def approval_for(peer: FakePeer, workspace: Path, folder: str) -> tuple[MessageRef, Card]:
    """The owner asks to delete `folder`; returns the approval card the peer got."""
    (workspace / folder).mkdir(parents=True)
    (workspace / folder / "notes.txt").write_text("keep?")
    hand_over(workspace)
    await peer.say("ada", f"/run rm -rf /workspace/{folder}")
    ref, card = await card_with(peer, f"rm -rf /workspace/{folder}")
    assert [button.label for button in card.buttons] == ["Approve", "Deny"]
    return ref, card


async def decided(peer: FakePeer, ref: MessageRef) -> Card:
    """The card `ref` once edited (after a decision)."""
    while True:
        edited, card = await asyncio.wait_for(peer.edits.get(), 60)
        if edited == ref:
            return card


@pytest.mark.slow
async def test_an_approval_card_on_the_fake_channel_is_decided_by_its_buttons(
    tmp_path: Path, docker_image: str
) -> None:
    settings = settings_for(tmp_path / "home")
    peer = FakePeer()
    section = FakeSettings(token=SecretStr(TOKEN), owner_id="ada")
    registry = CHANNELS.with_channel(fake_spec(section, peer))
    workspace = settings.home / "workspace"
    async with serving(settings, registry, peer):
        ref, card = await approval_for(peer, workspace, "old")
        await peer.press(
            "ada", ref, next(b for b in card.buttons if b.label == "Deny").action_token
        )
        denied = await decided(peer, ref)
        ref, card = await approval_for(peer, workspace, "older")
        mallory = next(b for b in card.buttons if b.label == "Approve").action_token
        await peer.press("mallory", ref, mallory)  # not the owner: the channel drops it
        await peer.press("ada", ref, mallory)
        approved = await decided(peer, ref)

    assert "Denied" in shown(denied)
    assert (workspace / "old" / "notes.txt").exists()
    assert "Approved by ada" in shown(approved)
    assert not (workspace / "older").exists()


@pytest.mark.slow
async def test_its_token_is_masked_in_the_log_and_the_receipts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, docker_image: str
) -> None:
    settings = settings_for(tmp_path / "home")
    peer = FakePeer()
    section = FakeSettings(token=SecretStr(TOKEN), owner_id="ada")
    registry = CHANNELS.with_channel(fake_spec(section, peer))
    caplog.handler.setFormatter(RedactingFormatter(redactor_for(settings, registry), "%(message)s"))
    caplog.set_level(logging.INFO)
    async with serving(settings, registry, peer):
        await peer.say("ada", f"/run echo {TOKEN}")
        await card_with(peer, "exit")

    assert "fake: serving with token" in caplog.text  # the line was logged, masked
    assert TOKEN not in caplog.text
    with sqlite3.connect(settings.home / LEDGER_FILE) as db:
        rows = db.execute("SELECT * FROM receipts").fetchall()
    assert any("/run echo" in str(row) for row in rows)
    assert not [row for row in rows if TOKEN in str(row)]
