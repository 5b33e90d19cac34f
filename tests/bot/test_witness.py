"""The chat as a witness: the digest card and /receipts verify carry the ledger's fingerprint,
and a fingerprint kept in the chat catches a ledger cut even with its checkpoints gone."""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.app import assemble
from bot.receipts_cli import verify
from core.config import load_settings
from core.events import CardKind
from core.receipts.checkpoints import CHECKPOINTS_FILE
from core.receipts.signing import KEY_FILE, PUBLIC_FILE, load_verifier
from tests.fakes.calendar import CalendarClock
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say
from tests.fakes.scheduled_app import scheduled_app, scheduler, write_jobs

WEB = {"LANCELOT_WEB_PORT": "0"}  # /receipts is there when the receipt page is
JOBS = """
  daily_digest:
    run: builtin:daily_digest
    cron: "0 8 * * *"
"""


def cut(home: Path, keep: int) -> None:
    db = sqlite3.connect(home / "ledger.db", isolation_level=None)
    db.execute("DROP TRIGGER receipts_no_delete")
    db.execute("DELETE FROM receipts WHERE seq > ?", (keep,))
    db.close()


async def test_a_fingerprint_from_the_digest_card_catches_a_cut_ledger(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    clock = CalendarClock(time.time())
    phone = MemoryChannel()
    jobs = write_jobs(tmp_path / "jobs.yaml", JOBS)
    async with scheduled_app(home, clock, jobs, channels=(phone,)) as app:
        await say(app, phone, "/status")
        next_day = datetime.fromtimestamp(clock.time() + 86400, UTC).replace(hour=8, minute=1)
        clock.set(next_day)
        assert await scheduler(app).run_pending() == 1
        digest = next(c for _, c in phone.delivered if c.kind is CardKind.DIGEST)
        latest = app.ledger.latest_checkpoint
    assert latest is not None
    fields = dict(digest.fields)
    assert fields["Ledger"].startswith("verified, ")
    fingerprint = fields["Fingerprint"].split()[0]
    seq = int(fingerprint.split(":")[0])
    assert seq <= latest.seq
    key = load_verifier(home)
    assert key is not None
    assert fields["Key"] == key.fingerprint
    settings = load_settings(environ={"LANCELOT_HOME": str(home)})
    assert verify(settings, against=fingerprint) == 0
    assert verify(settings, against=fields["Key"]) == 0
    # Someone cuts the ledger below the digest and removes every trace of the checkpoints.
    cut(home, seq - 1)
    for name in (CHECKPOINTS_FILE, KEY_FILE, PUBLIC_FILE):
        (home / name).unlink()
    capsys.readouterr()
    assert verify(settings) == 0  # nothing on the machine can tell any more...
    assert "never signed" in capsys.readouterr().out
    assert verify(settings, against=fingerprint) == 1  # ...but the chat can
    out = capsys.readouterr().out
    assert f"TAMPERED at receipt #{seq}" in out
    assert f"truncated: the ledger ends at receipt #{seq - 1}" in out
    assert f"fingerprint {fingerprint}" in out
    assert verify(settings, against=fields["Key"]) == 1  # and so can the key's fingerprint
    assert f"re-keyed: no checkpoint.pub here, but the key fingerprint {key.fingerprint}" in (
        capsys.readouterr().out
    )


async def test_receipts_verify_in_chat_answers_with_the_fingerprint(tmp_path: Path) -> None:
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home"), **WEB})
    async with assemble(settings) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        await say(app, phone, "/status")
        card = await say(app, phone, "/receipts verify")
        latest = app.ledger.latest_checkpoint
    assert card.title == "Ledger verified"
    assert latest is not None
    fields = dict(card.fields)
    assert fields["Fingerprint"] == latest.fingerprint  # signed as it answered
    assert f"--against {fields['Fingerprint']}" in card.body
    assert verify(settings, against=fields["Fingerprint"]) == 0
    key = load_verifier(settings.home)
    assert key is not None
    assert fields["Key"] == key.fingerprint
    assert f"--against {key.fingerprint}" in card.body
    assert verify(settings, against=fields["Key"]) == 0


async def test_receipts_verify_in_chat_sees_a_public_key_swapped_under_it(tmp_path: Path) -> None:
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home"), **WEB})
    async with assemble(settings) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        await say(app, phone, "/status")
        other = Ed25519PrivateKey.generate().public_key().public_bytes_raw().hex()
        (settings.home / PUBLIC_FILE).write_text(f"{other}\n")
        card = await say(app, phone, "/receipts verify")
    assert card.title == "Ledger TAMPERED"
    assert "checkpoint.pub (key:" in card.body
    assert "is not the public key of checkpoint.key" in card.body


async def test_receipts_verify_in_chat_says_tampered(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = load_settings(environ={"LANCELOT_HOME": str(home), **WEB})
    async with assemble(settings) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        await say(app, phone, "/status")
    cut(home, 2)
    async with assemble(settings) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        card = await say(app, phone, "/receipts verify")
    assert card.title == "Ledger TAMPERED"
    assert card.kind is CardKind.ALERT
    assert "checkpoint" in card.body
