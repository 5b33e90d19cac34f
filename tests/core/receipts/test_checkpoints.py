"""Signed checkpoints: what the hash chain alone cannot show (a cut tail, a re-hashed chain)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import stat
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from core.receipts import verify as verify_module
from core.receipts.base import VerifyReport
from core.receipts.chain_start import records
from core.receipts.checkpoints import (
    CHECKPOINTS_FILE,
    MIN_GAP_SECONDS,
    Checkpointer,
    CheckpointLog,
)
from core.receipts.evidence import Evidence
from core.receipts.fingerprints import Fingerprint, parse_against
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt, StoredReceipt
from core.receipts.schema import COLUMNS
from core.receipts.signing import KEY_FILE, PUBLIC_FILE, CheckpointSigner, load_verifier
from core.receipts.verify import verify_ledger


def checkpointer(home: Path, every: int = 1000, seconds: float = 300.0) -> Checkpointer:
    return Checkpointer(
        CheckpointSigner.load_or_create(home),
        CheckpointLog(home / CHECKPOINTS_FILE),
        every_receipts=every,
        every_seconds=seconds,
    )


async def filled(home: Path, count: int, every: int = 1000) -> None:
    """A ledger of `count` receipts, closed (so checkpointed at its head)."""
    home.mkdir(exist_ok=True)
    async with SqliteLedger(home / "ledger.db", checkpoints=checkpointer(home, every)) as ledger:
        for i in range(count):  # one commit each, as receipts come in a quiet hour
            await ledger.append_durable(Receipt("command", f"step{i}", inputs={"i": i}))


def verify(home: Path, against: str | None = None, every: int = 1000) -> VerifyReport:
    return verify_ledger(
        home / "ledger.db",
        Evidence.of_home(home, every),
        parse_against(against) if against else None,
    )


def lines(home: Path) -> list[dict[str, Any]]:
    text = (home / CHECKPOINTS_FILE).read_text()
    return [json.loads(line) for line in text.splitlines()]


def tamper(home: Path, *statements: str) -> None:
    db = sqlite3.connect(home / "ledger.db", isolation_level=None)
    db.execute("DROP TRIGGER IF EXISTS receipts_no_update")
    db.execute("DROP TRIGGER IF EXISTS receipts_no_delete")
    for sql in statements:
        db.execute(sql)
    db.close()


def rechain(home: Path, from_seq: int) -> None:
    """Edit receipt `from_seq` and re-hash it and everything after: a chain that verifies."""
    db = sqlite3.connect(home / "ledger.db", isolation_level=None)
    db.execute("DROP TRIGGER IF EXISTS receipts_no_update")
    db.execute("UPDATE receipts SET action_name = 'nothing-to-see' WHERE seq = ?", (from_seq,))
    rows = [StoredReceipt(*r) for r in db.execute(f"SELECT {COLUMNS} FROM receipts ORDER BY seq")]
    prev = rows[from_seq - 2].hash if from_seq > 1 else "0" * 64
    db.execute("BEGIN")
    for row in rows[from_seq - 1 :]:
        new_hash = replace(row, prev_hash=prev).expected_hash()
        db.execute(
            "UPDATE receipts SET prev_hash = ?, hash = ? WHERE seq = ?", (prev, new_hash, row.seq)
        )
        prev = new_hash
    db.execute("COMMIT")
    db.close()


async def test_the_key_pair_is_private_and_apart_from_the_ledger(tmp_path: Path) -> None:
    await filled(tmp_path, 5)
    assert stat.S_IMODE(os.stat(tmp_path / KEY_FILE).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / CHECKPOINTS_FILE).st_mode) == 0o600
    assert (tmp_path / PUBLIC_FILE).read_text().strip() == load_verifier(tmp_path).hex  # type: ignore[union-attr]
    db = sqlite3.connect(tmp_path / "ledger.db")
    dump = "\n".join(db.iterdump())
    db.close()
    assert "PRIVATE KEY" not in dump
    assert "checkpoint" not in dump.lower()


async def test_a_checkpoint_every_n_receipts_and_one_at_shutdown(tmp_path: Path) -> None:
    await filled(tmp_path, 25, every=10)
    seqs = [line["seq"] for line in lines(tmp_path)]
    assert seqs[-1] == 25  # the shutdown checkpoint covers the last receipt
    assert any(10 <= seq < 25 for seq in seqs)  # every 10
    assert seqs == sorted(seqs)
    report = verify(tmp_path)
    assert report.ok, report.reason
    assert report.last_checkpoint is not None
    assert report.last_checkpoint.seq == 25
    assert report.checkpoints == len(seqs)


async def test_a_checkpoint_after_the_interval_when_receipts_came(tmp_path: Path) -> None:
    cp = checkpointer(tmp_path, every=1000, seconds=0.05)
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=cp) as ledger:
        await ledger.append_durable(Receipt("command", "one"))
        for _ in range(100):
            if cp.latest is not None and cp.latest.seq == 1:
                break
            await asyncio.sleep(0.02)
        assert cp.latest is not None
        assert cp.latest.seq == 1
        assert [line["seq"] for line in lines(tmp_path)] == [1]


async def test_a_ledger_from_before_checkpoints_is_covered_when_opened(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for i in range(7):
            ledger.append(Receipt("command", f"old{i}"))
    cp = checkpointer(tmp_path)
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=cp) as ledger:
        assert ledger.latest_checkpoint is not None
        # Receipt #8 records where the chain began (over 7 receipts, with a new key).
        assert ledger.latest_checkpoint.seq == 8
    found = records(tmp_path / "ledger.db")
    assert [(r.seq, r.name, r.over) for r in found] == [(8, "began", 7)]
    assert verify(tmp_path).ok


@pytest.mark.parametrize("keep", [9, 1], ids=["cut-by-one", "all-but-one"])
async def test_a_cut_tail_is_truncation_naming_the_checkpoint(tmp_path: Path, keep: int) -> None:
    await filled(tmp_path, 10)
    tamper(tmp_path, f"DELETE FROM receipts WHERE seq > {keep}")
    assert verify_ledger(tmp_path / "ledger.db").ok  # the chain alone cannot tell
    report = verify(tmp_path)
    assert not report.ok
    assert report.first_bad_seq == keep + 1
    assert report.reason is not None
    assert report.reason.startswith("truncated")
    assert f"ends at receipt #{keep}" in report.reason
    assert "checkpoint 10:" in report.reason
    assert f"{10 - keep} missing" in report.reason


async def test_an_edit_rehashed_to_the_end_is_a_rewrite_naming_the_checkpoint(
    tmp_path: Path,
) -> None:
    await filled(tmp_path, 30, every=10)
    checkpoints = [line["seq"] for line in lines(tmp_path)]
    rechain(tmp_path, 14)
    assert verify_ledger(tmp_path / "ledger.db").ok  # the chain alone cannot tell
    report = verify(tmp_path)
    assert not report.ok
    first_after = min(seq for seq in checkpoints if seq >= 14)
    assert report.first_bad_seq == first_after
    assert report.reason is not None
    assert report.reason.startswith("rewritten")
    assert f"checkpoint {first_after}:" in report.reason
    assert report.last_checkpoint is not None
    assert report.last_checkpoint.seq < 14  # the last one that still matched


async def test_a_rewrite_names_the_last_checkpoint_that_still_holds(tmp_path: Path) -> None:
    await filled(tmp_path, 30, every=10)
    rechain(tmp_path, 14)
    report = verify(tmp_path)
    assert report.last_checkpoint is not None
    since = report.last_checkpoint.fingerprint
    assert f"; something from after {since} up to here was changed and" in (report.reason or "")
    rechain(tmp_path, 3)  # before every checkpoint: only the start vouches for what came before
    report = verify(tmp_path)
    assert report.last_checkpoint is None
    assert (report.reason or "").endswith(
        "; something from after the first receipt up to here was changed and the chain re-hashed"
    )


async def test_a_forged_or_deleted_checkpoint_file_is_reported(tmp_path: Path) -> None:
    await filled(tmp_path, 10)
    path = tmp_path / CHECKPOINTS_FILE
    original = path.read_text()
    forged = json.loads(original.splitlines()[-1])
    forged["seq"] = 3
    path.write_text(original + json.dumps(forged) + "\n")
    report = verify(tmp_path)
    assert not report.ok
    assert report.reason is not None
    assert "does not verify" in report.reason
    path.unlink()
    report = verify(tmp_path)
    assert not report.ok
    assert report.reason is not None
    assert "checkpoints.jsonl is missing" in report.reason


async def test_a_fingerprint_from_elsewhere_is_checked(tmp_path: Path) -> None:
    await filled(tmp_path, 10)
    head = lines(tmp_path)[-1]
    good = f"{head['seq']}:{str(head['head'])[:16]}"
    assert verify(tmp_path, good).ok
    wrong = verify(tmp_path, f"{head['seq']}:{'0' * 16}")
    assert not wrong.ok
    assert wrong.reason is not None
    assert wrong.reason.startswith("rewritten")
    beyond = verify(tmp_path, f"12:{str(head['head'])[:16]}")
    assert not beyond.ok
    assert beyond.reason is not None
    assert beyond.reason.startswith("truncated")


def test_a_fingerprint_must_look_like_one() -> None:
    assert str(Fingerprint.parse(" 120:9F2C0A11b0e1d2c3 ")) == "120:9f2c0a11b0e1d2c3"
    for bad in ("", "120", "120:xyz", "abc:9f2c0a11", "120:9f2c"):
        with pytest.raises(ValueError, match="not a fingerprint"):
            Fingerprint.parse(bad)


def test_a_bad_fingerprint_is_told_what_one_looks_like() -> None:
    with pytest.raises(ValueError, match=r"^not a fingerprint") as caught:
        parse_against("soon")
    assert str(caught.value) == (
        "not a fingerprint: 'soon' (expected <seq>:<hex>, e.g. 120:9f2c…, or key:<hex>)"
    )


async def test_a_corrupt_ledger_is_a_failed_report_not_an_exception(tmp_path: Path) -> None:
    (tmp_path / "ledger.db").write_bytes(b"\x00garbage" * 4096)
    report = verify_ledger(tmp_path / "ledger.db")
    assert not report.ok
    assert not report.readable
    assert report.reason is not None
    assert report.reason.startswith("cannot read the ledger")


async def test_the_ledger_verifies_and_checkpoints_on_demand(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path)) as ledger:
        ledger.append(Receipt("command", "one"))
        checkpoint = await ledger.checkpoint()
        assert checkpoint is not None
        assert checkpoint.seq == 1
        assert await ledger.checkpoint() == checkpoint  # nothing new: the same one
        report = await ledger.verify()
        assert report.ok
        assert report.file == str(tmp_path / "ledger.db")
        assert report.last_checkpoint == checkpoint
        assert report.head == checkpoint.fingerprint


@pytest.mark.parametrize("damage", ["none", "rechain", "alter", "remove", "cut"])
async def test_walking_in_processes_finds_what_one_walk_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    await filled(tmp_path, 40, every=7)
    if damage == "rechain":
        rechain(tmp_path, 22)
    elif damage == "alter":
        tamper(tmp_path, "UPDATE receipts SET inputs = '{}' WHERE seq = 27")
    elif damage == "remove":
        tamper(tmp_path, "DELETE FROM receipts WHERE seq = 14")  # where two spans meet
    elif damage == "cut":
        tamper(tmp_path, "DELETE FROM receipts WHERE seq > 33")
    evidence = Evidence.of_home(tmp_path, 1000)
    alone = verify_ledger(tmp_path / "ledger.db", evidence, processes=1)
    monkeypatch.setattr(verify_module, "PARALLEL_FROM", 10)
    apart = verify_ledger(tmp_path / "ledger.db", evidence, processes=3)
    assert apart == alone
    assert apart.ok is (damage == "none")


async def test_a_burst_is_signed_about_once_a_second_not_every_n(tmp_path: Path) -> None:
    started = time.monotonic()
    async with SqliteLedger(
        tmp_path / "ledger.db", batch_size=16, checkpoints=checkpointer(tmp_path, every=10)
    ) as ledger:
        for i in range(3000):
            ledger.append(Receipt("command", f"bulk{i}"))
            if i % 50 == 49:
                await ledger.flush()  # ~60 commits, each 10 or more past the last checkpoint
    seconds = time.monotonic() - started
    seqs = [line["seq"] for line in lines(tmp_path)]
    assert seqs[-1] == 3000
    assert len(seqs) <= seconds / MIN_GAP_SECONDS + 2
