"""The checkpoint file itself (core/receipts/checkpoints.py): kept private, written whole,
read line by line (a torn last line, blank lines, a line added by hand), and the alarms a
cut ledger or an unwritable file raise in the log."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import time
from pathlib import Path

import pytest

from core.receipts.checkpoints import CHECKPOINTS_FILE, Checkpointer, CheckpointLog
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.receipts.signing import KEY_FILE, PUBLIC_FILE, CheckpointSigner
from tests.fakes.descriptors import leaves_no_file_open

from .test_checkpoint_chain import checkpointer, cut, failure, rewrite, signed, verify


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


async def test_a_checkpoint_file_made_readable_by_others_is_private_again_at_start(
    tmp_path: Path,
) -> None:
    await signed(tmp_path, at=(2,))
    (tmp_path / CHECKPOINTS_FILE).chmod(0o644)  # restored from a backup, say
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path)):
        assert mode(tmp_path / CHECKPOINTS_FILE) == 0o600


async def test_a_checkpoint_file_deleted_while_running_comes_back_private_and_named(
    tmp_path: Path,
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path)) as ledger:
        for i in range(3):
            await ledger.append_durable(Receipt("command", f"step{i}"))
            await ledger.checkpoint()
        (tmp_path / CHECKPOINTS_FILE).unlink()
        await ledger.append_durable(Receipt("command", "after"))
        assert await ledger.checkpoint() is not None
        assert mode(tmp_path / CHECKPOINTS_FILE) == 0o600
    assert failure(tmp_path) == (
        "checkpoints.jsonl line 1: checkpoint #4 comes first: checkpoint #1..#3 missing before"
        " it (removed)"
    )


async def test_writing_checkpoints_holds_no_file_open(tmp_path: Path) -> None:
    signer = CheckpointSigner.load_or_create(tmp_path)
    log_file = CheckpointLog(tmp_path / CHECKPOINTS_FILE)
    latest = None
    with leaves_no_file_open():
        for seq in range(1, 51):
            latest = signer.sign(seq, f"{seq:064x}", "2030-01-01T00:00:00Z", latest)
            log_file.append(latest)
    assert len(log_file.read(signer.verifier).checkpoints) == 50


async def test_a_checkpoint_states_its_time_in_utc_to_the_second(tmp_path: Path) -> None:
    cp = Checkpointer(
        CheckpointSigner.load_or_create(tmp_path),
        CheckpointLog(tmp_path / CHECKPOINTS_FILE),
        clock=lambda: 1_900_000_000.75,
    )
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=cp) as ledger:
        await ledger.append_durable(Receipt("command", "one"))
        checkpoint = await ledger.checkpoint()
    assert checkpoint is not None
    assert checkpoint.time == "2030-03-17T17:46:40Z"
    (line,) = (tmp_path / CHECKPOINTS_FILE).read_text().splitlines()
    assert json.loads(line)["time"] == "2030-03-17T17:46:40Z"


async def test_a_last_line_torn_by_a_crash_vouches_for_nothing_and_is_no_alarm(
    tmp_path: Path,
) -> None:
    lines = await signed(tmp_path)
    rewrite(tmp_path, [*lines, lines[-1][:40]])  # the write of a sixth line cut short
    report = verify(tmp_path)
    assert report.ok, report.reason
    assert report.checkpoints == 5


async def test_a_whole_last_line_without_its_line_end_was_written_by_hand(tmp_path: Path) -> None:
    lines = await signed(tmp_path)
    rewrite(tmp_path, [*lines[:-1], lines[-1].rstrip("\n")])
    assert failure(tmp_path) == "checkpoints.jsonl: its last line has no line end (altered)"


async def test_blank_lines_are_skipped_and_the_lines_after_them_still_checked(
    tmp_path: Path,
) -> None:
    lines = await signed(tmp_path)
    rewrite(tmp_path, [lines[0], "\n", *lines[1:], "\n"])
    assert verify(tmp_path).ok
    forged = json.loads(lines[4])
    forged["seq"] = 3
    rewrite(tmp_path, [*lines[:4], "   \n", json.dumps(forged) + "\n"])
    assert "checkpoints.jsonl line 6: the signature of checkpoint 3:" in failure(tmp_path)


async def test_checkpoints_with_no_key_at_all_to_check_them_fail(tmp_path: Path) -> None:
    await signed(tmp_path)
    (tmp_path / PUBLIC_FILE).unlink()
    (tmp_path / KEY_FILE).unlink()
    assert failure(tmp_path) == "checkpoints.jsonl: no public key to check its signatures"


async def test_opening_a_ledger_cut_below_its_last_checkpoint_is_a_critical_alarm(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await signed(tmp_path, at=(6,))
    cut(tmp_path, 4)
    with caplog.at_level(logging.CRITICAL, logger="core.receipts.checkpoints"):
        async with SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path)):
            pass
    (alarm,) = [r for r in caplog.records if r.levelno == logging.CRITICAL]
    assert alarm.getMessage().startswith("the receipt ledger ends at #4, but checkpoint 6:")
    assert alarm.getMessage().endswith(
        " vouches for 6 receipts: it was cut (lancelot receipts verify tells more)"
    )


async def test_a_checkpoint_that_cannot_be_written_is_logged_and_the_ledger_closes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path)) as ledger:
        await ledger.append_durable(Receipt("command", "one"))
        (tmp_path / CHECKPOINTS_FILE).unlink()
        (tmp_path / CHECKPOINTS_FILE).mkdir()  # the shutdown checkpoint cannot be appended
        caplog.set_level(logging.ERROR, logger="core.receipts.checkpoints")
    (error,) = [r for r in caplog.records if r.name == "core.receipts.checkpoints"]
    assert error.getMessage().startswith(
        f"ledger checkpoint not written to {tmp_path / CHECKPOINTS_FILE}: [Errno 21]"
    )


async def test_a_ledger_reopened_continues_from_its_only_checkpoint(tmp_path: Path) -> None:
    (line,) = await signed(tmp_path, at=(2,))
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path)) as ledger:
        latest = ledger.latest_checkpoint
        assert latest is not None
        assert (latest.number, latest.seq) == (1, 2)
    assert (tmp_path / CHECKPOINTS_FILE).read_text() == line  # nothing began again


async def test_a_forged_last_line_is_not_taken_as_the_latest_checkpoint(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lines = await signed(tmp_path)
    forged = json.loads(lines[-1])
    forged.update(n=6, seq=99)
    rewrite(tmp_path, [*lines, json.dumps(forged) + "\n"])
    with caplog.at_level(logging.CRITICAL, logger="core.receipts.checkpoints"):
        cp = checkpointer(tmp_path)
        async with SqliteLedger(tmp_path / "ledger.db", checkpoints=cp) as ledger:
            latest = ledger.latest_checkpoint
            assert latest is not None
            assert (latest.number, latest.seq) == (5, 15)
    assert not caplog.records  # no false alarm of a cut ledger


@pytest.mark.parametrize(
    "change",
    [{"seq": "6"}, {"seq": -6}, {"seq": 6.0}, {"seq": True}, {"head": 6}, {"time": None},
     {"sig": ["ab"]}],
    ids=["seq-text", "seq-negative", "seq-float", "seq-bool", "head-number", "time-null",
         "sig-list"],
)  # fmt: skip
async def test_a_line_with_a_field_of_the_wrong_kind_is_not_a_checkpoint(
    tmp_path: Path, change: dict[str, object]
) -> None:
    lines = await signed(tmp_path)
    item = json.loads(lines[1])
    item.update(change)
    rewrite(tmp_path, [lines[0], json.dumps(item) + "\n", *lines[2:]])
    assert failure(tmp_path) == "checkpoints.jsonl line 2: not a checkpoint"


async def test_receipts_due_a_checkpoint_right_after_one_are_signed_a_second_later(
    tmp_path: Path,
) -> None:
    """At most once a second, and no later: a burst's end waits for the gap, not more."""
    cp = checkpointer(tmp_path, every=10)
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=cp) as ledger:
        for i in range(10):
            await ledger.append_durable(Receipt("command", f"first{i}"))
        await wait_for_checkpoint(cp, 10)
        signed_at = time.monotonic()
        assert cp.latest is not None
        assert cp.latest.seq == 10  # due at the 10th receipt, not later
        for i in range(10):
            await ledger.append_durable(Receipt("command", f"second{i}"))
        await wait_for_checkpoint(cp, 20)
        gap = time.monotonic() - signed_at
    assert 0.9 <= gap < 1.7  # seen up to a poll (10 ms) after it was signed


async def wait_for_checkpoint(cp: Checkpointer, seq: int) -> None:
    """Until the checkpointer has signed `seq` (in the background), for at most 5 seconds."""
    for _ in range(500):
        if cp.latest is not None and cp.latest.seq >= seq:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"no checkpoint at #{seq} within 5 seconds")


async def test_receipts_a_crash_left_unsigned_are_signed_as_the_ledger_opens(
    tmp_path: Path,
) -> None:
    await signed(tmp_path, at=(3,))
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:  # committed, never signed
        for i in range(5):
            await ledger.append_durable(Receipt("command", f"unsigned{i}"))
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path)) as ledger:
        latest = ledger.latest_checkpoint
        assert latest is not None
        assert (latest.number, latest.seq) == (2, 8)  # before anything new is appended
    assert verify(tmp_path).checkpoints == 2


async def test_a_fresh_ledger_makes_its_empty_checkpoint_file_at_once(tmp_path: Path) -> None:
    """From then on a missing file was deleted: verify tells it from one not yet written."""
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path)) as ledger:
        assert (tmp_path / CHECKPOINTS_FILE).read_bytes() == b""
        assert mode(tmp_path / CHECKPOINTS_FILE) == 0o600
        assert await ledger.checkpoint() is None  # nothing to vouch for yet
    assert (tmp_path / CHECKPOINTS_FILE).read_bytes() == b""  # nor at shutdown
    assert verify(tmp_path).ok


async def test_no_checkpoint_is_due_before_n_more_receipts(tmp_path: Path) -> None:
    cp = checkpointer(tmp_path, every=10)
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=cp) as ledger:
        for i in range(10):
            await ledger.append_durable(Receipt("command", f"first{i}"))
        await wait_for_checkpoint(cp, 10)
        for i in range(9):
            await ledger.append_durable(Receipt("command", f"second{i}"))
        await asyncio.sleep(1.5)  # past the gap: a checkpoint due would be signed by now
        assert cp.latest is not None
        assert cp.latest.seq == 10


async def test_closing_with_a_checkpoint_waiting_for_its_gap_signs_at_once_and_leaves_no_task(
    tmp_path: Path,
) -> None:
    before = asyncio.all_tasks()
    cp = checkpointer(tmp_path, every=10)  # its timer sleeps for five minutes
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=cp) as ledger:
        for i in range(10):
            await ledger.append_durable(Receipt("command", f"first{i}"))
        await wait_for_checkpoint(cp, 10)
        for i in range(10):  # due again: waits for the gap, about a second
            await ledger.append_durable(Receipt("command", f"second{i}"))
        closing = time.monotonic()
    assert time.monotonic() - closing < 0.5
    assert cp.latest is not None
    assert cp.latest.seq == 20
    assert asyncio.all_tasks() == before


async def test_a_ledger_cut_to_nothing_keeps_its_latest_checkpoint_and_signs_nothing(
    tmp_path: Path,
) -> None:
    lines = await signed(tmp_path, at=(6,))
    cut(tmp_path, 0)
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path)) as ledger:
        latest = await ledger.checkpoint()
        assert latest is not None
        assert (latest.number, latest.seq) == (1, 6)
    assert (tmp_path / CHECKPOINTS_FILE).read_text() == "".join(lines)
    assert failure(tmp_path).startswith("truncated")


async def test_a_missing_checkpoint_file_is_named_from_the_first_receipt(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=checkpointer(tmp_path)):
        pass  # the key and the empty file are made
    (tmp_path / CHECKPOINTS_FILE).unlink()
    assert verify(tmp_path).ok  # an empty ledger: nothing to vouch for
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        await ledger.append_durable(Receipt("command", "one"))
    assert failure(tmp_path) == (
        "checkpoints.jsonl is missing: nothing vouches for the ledger's length"
    )
