"""The incremental verify: only what came after the last checkpoint a verify passed is read,
and every tampering there (or with the checkpoint it starts from) still fails, named."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from core.receipts.base import Checkpoint
from core.receipts.checkpoints import CHECKPOINTS_FILE
from core.receipts.evidence import Evidence
from core.receipts.incremental import (
    MARK_FILE,
    IncrementalReport,
    read_mark,
    verify_since_mark,
)
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.receipts.verify import verify_ledger
from tests.core.receipts.test_checkpoint_chain import (
    checkpointer,
    checkpoints_in,
    line_of,
    private_key,
    rewrite,
    signed,
)
from tests.core.receipts.test_checkpoints import rechain

FIRST = (3, 6, 9)  # checkpoints before the first verify
LATER = (12, 15)  # and after it


async def grow(home: Path, to: int, at: Sequence[int] = LATER) -> None:
    """More receipts up to `to`, signed at each seq in `at`."""
    async with SqliteLedger(home / "ledger.db", checkpoints=checkpointer(home)) as ledger:
        for seq in range(await ledger.count() + 1, to + 1):
            await ledger.append_durable(Receipt("command", f"step{seq}", inputs={"i": seq}))
            if seq in at:
                await ledger.checkpoint()


def since(home: Path) -> IncrementalReport:
    return verify_since_mark(home / "ledger.db", Evidence.of_home(home, 1000))


def full(home: Path) -> str | None:
    report = verify_ledger(home / "ledger.db", Evidence.of_home(home, 1000))
    return report.reason


def alter(home: Path, seq: int, text: str = "changed") -> None:
    """Change a receipt's content, keeping its stored hash (what a quiet edit looks like)."""
    db = sqlite3.connect(home / "ledger.db", isolation_level=None)
    db.execute("DROP TRIGGER receipts_no_update")
    db.execute("UPDATE receipts SET action_name = ? WHERE seq = ?", (text, seq))
    db.close()


def cut(home: Path, keep: int) -> None:
    db = sqlite3.connect(home / "ledger.db", isolation_level=None)
    db.execute("DROP TRIGGER IF EXISTS receipts_no_delete")
    db.execute("DELETE FROM receipts WHERE seq > ?", (keep,))
    db.close()


def failure(home: Path) -> str:
    found = since(home)
    assert not found.report.ok
    assert found.report.reason is not None
    return found.report.reason


async def verified_once(home: Path) -> Checkpoint:
    """A ledger of 9 receipts signed at 3, 6, 9, verified in full (the mark at #9), then
    grown to 16 receipts signed at 12, 15 and 16 (closing the ledger signs its head)."""
    await signed(home, FIRST)
    first = since(home)
    assert first.report.ok, first.report.reason
    assert first.since is None  # no mark yet: a full verify
    assert first.report.checked == 9
    mark = read_mark(home / "verified.json")  # the name docs/security.md gives
    assert mark is not None
    assert (mark.number, mark.seq) == (3, 9)
    await grow(home, 16)
    return mark


async def test_it_reads_only_what_came_after_the_mark_and_moves_the_mark(tmp_path: Path) -> None:
    mark = await verified_once(tmp_path)
    found = since(tmp_path)
    assert found.report.ok, found.report.reason
    assert found.since == mark
    assert found.report.file == str(tmp_path / "ledger.db")
    verifier = Evidence.of_home(tmp_path, 1000).keys.verifier
    assert verifier is not None
    assert found.report.key == verifier.fingerprint
    assert found.report.checked == 7  # receipts 10..16, not 1..9
    assert found.report.checkpoints == 3  # at 12, 15, and 16 (signed at the ledger's close)
    assert found.report.head is not None
    assert found.report.head.startswith("16:")
    moved = read_mark(tmp_path / MARK_FILE)
    assert moved is not None
    assert (moved.number, moved.seq) == (6, 16)
    again = since(tmp_path)
    assert again.report.ok
    assert again.report.checked == 0


async def test_an_edit_after_the_mark_is_named(tmp_path: Path) -> None:
    await verified_once(tmp_path)
    alter(tmp_path, 13)
    found = since(tmp_path)
    assert not found.report.ok
    assert found.report.first_bad_seq == 13
    assert found.report.reason == "content does not match its hash (altered)"
    kept = read_mark(tmp_path / MARK_FILE)
    assert kept is not None
    assert kept.seq == 9


async def test_an_edit_under_the_mark_is_left_to_the_full_verify(tmp_path: Path) -> None:
    """What the incremental verify trades away, stated: receipts under the mark are not
    re-read. The full verify still finds the edit."""
    await verified_once(tmp_path)
    alter(tmp_path, 4)
    assert since(tmp_path).report.ok
    assert full(tmp_path) == "content does not match its hash (altered)"


async def test_the_checkpoint_it_starts_from_must_still_hold(tmp_path: Path) -> None:
    mark = await verified_once(tmp_path)
    db = sqlite3.connect(tmp_path / "ledger.db", isolation_level=None)
    db.execute("DROP TRIGGER receipts_no_update")
    db.execute("UPDATE receipts SET hash = ? WHERE seq = 9", ("0" * 64,))
    db.close()
    assert failure(tmp_path) == (
        f"rewritten: receipt #9 is 9:{'0' * 16}, not what checkpoint {mark.fingerprint}"
        f" (signed {mark.time}, verified before) vouches for"
    )
    report = since(tmp_path).report
    assert (report.checked, report.first_bad_seq) == (0, 9)


async def test_a_ledger_cut_below_the_mark_or_below_a_later_checkpoint_fails(
    tmp_path: Path,
) -> None:
    await verified_once(tmp_path)
    cut(tmp_path, 14)
    assert failure(tmp_path).startswith("truncated: the ledger ends at receipt #14, but checkpoint")
    cut(tmp_path, 7)
    assert failure(tmp_path).startswith("truncated: receipt #9 is gone, but checkpoint 9:")


async def test_the_marked_checkpoint_removed_from_the_file_fails(tmp_path: Path) -> None:
    mark = await verified_once(tmp_path)
    lines = (tmp_path / CHECKPOINTS_FILE).read_text().splitlines(keepends=True)
    rewrite(tmp_path, lines[:2] + lines[3:])
    assert failure(tmp_path) == (
        f"checkpoints.jsonl: checkpoint {mark.fingerprint}, verified before, is gone"
    )
    assert since(tmp_path).report.checked == 0
    (tmp_path / CHECKPOINTS_FILE).unlink()
    assert failure(tmp_path).endswith("verified before, is gone")


async def test_checkpoints_after_the_mark_are_checked_like_a_full_verify(tmp_path: Path) -> None:
    await verified_once(tmp_path)
    lines = (tmp_path / CHECKPOINTS_FILE).read_text().splitlines(keepends=True)
    rewrite(tmp_path, [*lines[:3], lines[4]])  # #4 removed after the mark
    assert failure(tmp_path) == (
        "checkpoints.jsonl line 4: checkpoint #5 follows #3: checkpoint #4 missing before it"
        " (removed)"
    )
    rewrite(tmp_path, [*lines[:4], lines[2], lines[4]])  # #3 (the mark itself) repeated
    assert failure(tmp_path) == (
        "checkpoints.jsonl line 5: checkpoint #3 is repeated (line 3 holds it already)"
    )
    rewrite(tmp_path, [*lines, lines[2]])  # a copy of the mark's line at the end
    assert failure(tmp_path) == (
        "checkpoints.jsonl line 7: checkpoint #3 is repeated (line 3 holds it already)"
    )
    rewrite(tmp_path, [*lines[:4], lines[1], lines[4]])  # #2 (under the mark) repeated
    assert failure(tmp_path) == (
        "checkpoints.jsonl line 5: checkpoint #2 is repeated (an earlier line holds it already)"
    )
    forged = checkpoints_in(lines)[4]
    other = json.loads(lines[4]) | {"sig": "00" * 64}
    rewrite(tmp_path, [*lines[:4], json.dumps(other) + "\n"])
    assert failure(tmp_path) == (
        f"checkpoints.jsonl line 5: the signature of checkpoint {forged.fingerprint} does not"
        " verify (forged or altered)"
    )


async def test_a_re_hashed_tail_under_a_later_checkpoint_fails(tmp_path: Path) -> None:
    """An edit after the mark, re-hashed to the end: the chain links, but checkpoint #4
    (at receipt 12) no longer matches."""
    await verified_once(tmp_path)
    lines = (tmp_path / CHECKPOINTS_FILE).read_text().splitlines(keepends=True)
    twelve = checkpoints_in(lines)[3]
    rechain(tmp_path, 11)
    found = since(tmp_path)
    assert not found.report.ok
    assert found.report.first_bad_seq == 12
    assert found.report.reason is not None
    assert found.report.reason.startswith(
        f"rewritten: the hash here is not the one checkpoint {twelve.fingerprint}"
    )


async def test_a_chain_begun_again_after_the_mark_fails(tmp_path: Path) -> None:
    mark = await verified_once(tmp_path)
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        stored = await ledger.append_durable(
            Receipt("checkpoint_chain", "began", outputs={"over": 16})
        )
    assert failure(tmp_path) == (
        f"ledger.db receipt #{stored.seq}: a checkpoint chain began again there, after"
        f" checkpoint {mark.fingerprint} had been verified: the checkpoints were removed"
    )


async def test_a_mark_that_cannot_be_read_means_a_full_verify(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await verified_once(tmp_path)
    (tmp_path / MARK_FILE).write_text("{not json")
    with caplog.at_level(logging.WARNING, "core.receipts.incremental"):
        found = since(tmp_path)
    (said,) = caplog.messages
    assert said.startswith(f"{tmp_path / MARK_FILE} cannot be read (")
    assert said.endswith("); verifying in full")
    assert found.report.ok
    assert found.since is None
    assert found.report.checked == 16
    mark = read_mark(tmp_path / MARK_FILE)
    assert mark is not None
    assert mark.seq == 16


async def test_a_forged_mark_past_the_real_checkpoints_fails(tmp_path: Path) -> None:
    """A mark written by someone else must name a checkpoint in the file, signed."""
    await verified_once(tmp_path)
    key = private_key(tmp_path)
    fake = Checkpoint(16, "a" * 64, "2026-01-01T00:00:00Z", "", 6, "b" * 64)
    signed_fake = json.loads(line_of(fake, key))
    (tmp_path / MARK_FILE).write_text(json.dumps(signed_fake))
    assert failure(tmp_path).endswith("verified before, is gone")


async def test_nothing_new_after_the_mark_is_no_missing_checkpoint(tmp_path: Path) -> None:
    """With no checkpoint after the mark, the checkpoints are not "missing": the mark's own
    checkpoint vouches for the ledger up to its head (here past a 5-receipt interval)."""
    await verified_once(tmp_path)
    assert since(tmp_path).report.ok
    found = verify_since_mark(tmp_path / "ledger.db", Evidence.of_home(tmp_path, 5))
    assert found.report.ok, found.report.reason
    assert found.report.checked == 0


async def test_an_unreadable_ledger_is_one_line(tmp_path: Path) -> None:
    await verified_once(tmp_path)
    assert since(tmp_path).report.ok
    (tmp_path / "ledger.db").write_bytes(b"not a database at all" * 100)
    for name in ("ledger.db-wal", "ledger.db-shm"):
        (tmp_path / name).unlink(missing_ok=True)
    report = since(tmp_path).report
    assert not report.ok
    assert not report.readable
    assert report.reason is not None
    assert report.reason.startswith("cannot read the ledger: ")
    assert report.checked == 0


async def test_a_ledger_never_signed_is_verified_in_full_and_leaves_no_mark(
    tmp_path: Path,
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for seq in range(1, 6):
            await ledger.append_durable(Receipt("command", f"step{seq}"))
    for _ in range(2):
        found = since(tmp_path)
        assert found.report.ok, found.report.reason
        assert found.since is None
        assert found.report.checked == 5
    assert not (tmp_path / MARK_FILE).exists()  # nothing vouches for a place to start
