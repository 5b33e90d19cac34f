"""The checkpoints as a chain of their own: attacks by someone who can write LANCELOT_HOME on
checkpoints.jsonl and the key files, each caught with the file and line named."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from core.receipts.base import CHAIN_START, Checkpoint, VerifyReport
from core.receipts.checkpoints import CHECKPOINTS_FILE, Checkpointer, CheckpointLog, parse
from core.receipts.evidence import Evidence
from core.receipts.fingerprints import parse_against
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.receipts.signing import KEY_FILE, PUBLIC_FILE, CheckpointSigner, load_verifier
from core.receipts.verify import verify_ledger

SIGNED_AT = (3, 6, 9, 12, 15)


def checkpointer(home: Path, every: int = 1000) -> Checkpointer:
    return Checkpointer(
        CheckpointSigner.load_or_create(home),
        CheckpointLog(home / CHECKPOINTS_FILE),
        every_receipts=every,
    )


async def signed(home: Path, at: Sequence[int] = SIGNED_AT, every: int = 1000) -> list[str]:
    """A ledger of at[-1] receipts signed at each seq in `at`, closed; the checkpoint lines."""
    async with SqliteLedger(home / "ledger.db", checkpoints=checkpointer(home, every)) as ledger:
        for seq in range(1, at[-1] + 1):
            await ledger.append_durable(Receipt("command", f"step{seq}", inputs={"i": seq}))
            if seq in at:
                await ledger.checkpoint()
    return (home / CHECKPOINTS_FILE).read_text().splitlines(keepends=True)


def verify(home: Path, against: str | None = None, every: int = 1000) -> VerifyReport:
    return verify_ledger(
        home / "ledger.db",
        Evidence.of_home(home, every),
        parse_against(against) if against else None,
    )


def failure(home: Path, every: int = 1000) -> str:
    report = verify(home, every=every)
    assert not report.ok
    assert report.reason is not None
    return report.reason


def rewrite(home: Path, lines: Sequence[str]) -> None:
    (home / CHECKPOINTS_FILE).write_text("".join(lines))


def cut(home: Path, keep: int) -> None:
    db = sqlite3.connect(home / "ledger.db", isolation_level=None)
    db.execute("DROP TRIGGER receipts_no_delete")
    db.execute("DELETE FROM receipts WHERE seq > ?", (keep,))
    db.close()


def head_at(home: Path, seq: int) -> str:
    db = sqlite3.connect(home / "ledger.db")
    (found,) = db.execute("SELECT hash FROM receipts WHERE seq = ?", (seq,)).fetchone()
    db.close()
    return str(found)


def private_key(home: Path) -> Ed25519PrivateKey:
    """The key beside the ledger: anyone who can write the home can read it too."""
    key = load_pem_private_key((home / KEY_FILE).read_bytes(), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    return key


def line_of(checkpoint: Checkpoint, key: Ed25519PrivateKey) -> str:
    """A checkpoint signed with `key`, as a line of the file (numbered unless legacy)."""
    item: dict[str, object] = {"seq": checkpoint.seq, "head": checkpoint.head}
    item["time"] = checkpoint.time
    if not checkpoint.legacy:
        item.update(n=checkpoint.number, prev=checkpoint.previous)
    item["sig"] = key.sign(checkpoint.message).hex()
    return json.dumps(item) + "\n"


def checkpoints_in(lines: Sequence[str]) -> list[Checkpoint]:
    found = [parse(line.encode()) for line in lines]
    assert all(c is not None for c in found)
    return [c for c in found if c is not None]


async def test_each_checkpoint_is_numbered_and_carries_the_link_of_the_one_before(
    tmp_path: Path,
) -> None:
    chain = checkpoints_in(await signed(tmp_path))
    assert [c.number for c in chain] == [1, 2, 3, 4, 5]
    assert [c.seq for c in chain] == list(SIGNED_AT)
    assert chain[0].previous == CHAIN_START
    assert [c.previous for c in chain[1:]] == [c.link for c in chain[:-1]]
    report = verify(tmp_path)
    assert report.ok, report.reason
    assert report.checkpoints == 5


async def test_a_checkpoint_removed_from_the_middle_is_named(tmp_path: Path) -> None:
    lines = await signed(tmp_path)
    rewrite(tmp_path, lines[:2] + lines[3:])
    assert failure(tmp_path) == (
        "checkpoints.jsonl line 3: checkpoint #4 follows #2: checkpoint #3 missing before it"
        " (removed)"
    )
    rewrite(tmp_path, lines[2:])
    assert failure(tmp_path) == (
        "checkpoints.jsonl line 1: checkpoint #3 comes first: checkpoint #1..#2 missing before"
        " it (removed)"
    )


async def test_a_repeated_checkpoint_is_named(tmp_path: Path) -> None:
    lines = await signed(tmp_path)
    rewrite(tmp_path, [*lines[:3], lines[1], *lines[3:]])
    assert failure(tmp_path) == (
        "checkpoints.jsonl line 4: checkpoint #2 is repeated (line 2 holds it already)"
    )


async def test_checkpoints_out_of_order_are_named(tmp_path: Path) -> None:
    lines = await signed(tmp_path)
    rewrite(tmp_path, [lines[0], lines[2], lines[1], *lines[3:]])
    assert failure(tmp_path) == (
        "checkpoints.jsonl line 2: checkpoint #3 is out of order: #2 comes after it (line 3)"
    )


async def test_a_checkpoint_replaced_by_one_signed_with_the_key_is_named(tmp_path: Path) -> None:
    lines = await signed(tmp_path)
    chain = checkpoints_in(lines)
    # Re-signed with the key beside the ledger, numbered right but not linked to #2.
    forged = Checkpoint(9, chain[2].head, chain[2].time, "", 3, CHAIN_START)
    rewrite(tmp_path, [*lines[:2], line_of(forged, private_key(tmp_path)), *lines[3:]])
    assert failure(tmp_path) == (
        "checkpoints.jsonl line 3: checkpoint #3 does not carry the link of the checkpoint on"
        " line 2 (replaced)"
    )


async def test_a_first_checkpoint_not_linked_to_the_chain_start_is_named(tmp_path: Path) -> None:
    lines = await signed(tmp_path)
    first = checkpoints_in(lines)[0]
    forged = Checkpoint(first.seq, first.head, first.time, "", 1, "e" * 64)
    rewrite(tmp_path, [line_of(forged, private_key(tmp_path)), *lines[1:]])
    assert failure(tmp_path) == (
        "checkpoints.jsonl line 1: checkpoint #1 does not carry the link of the chain's start"
        " (replaced)"
    )


async def test_a_gap_then_a_repeat_is_named_as_the_gap(tmp_path: Path) -> None:
    """#2 gone and #3 twice: what is missing is #2 (a later #3 moved nothing before it)."""
    lines = await signed(tmp_path)
    rewrite(tmp_path, [lines[0], lines[2], lines[2]])
    assert failure(tmp_path) == (
        "checkpoints.jsonl line 2: checkpoint #3 follows #1: checkpoint #2 missing before it"
        " (removed)"
    )


async def test_an_unnumbered_checkpoint_after_numbered_ones_is_named(tmp_path: Path) -> None:
    lines = await signed(tmp_path)
    legacy = Checkpoint(15, head_at(tmp_path, 15), "2030-01-01T00:00:00Z", "", 0, "")
    rewrite(tmp_path, [*lines, line_of(legacy, private_key(tmp_path))])
    assert failure(tmp_path) == (
        "checkpoints.jsonl line 6: an unnumbered checkpoint after numbered ones (inserted)"
    )


async def test_a_cut_ledger_with_its_checkpoints_emptied_fails_while_the_key_is_there(
    tmp_path: Path,
) -> None:
    await signed(tmp_path, at=(20,))
    cut(tmp_path, 19)
    (tmp_path / CHECKPOINTS_FILE).write_text("")
    assert failure(tmp_path, every=10) == (
        "checkpoints.jsonl is empty, but checkpoint.key is here and the ledger holds 19"
        " receipts, past the first checkpoint (due by #10): its checkpoints were removed"
    )
    # Within the first interval, an empty file is what a crash before the first checkpoint
    # leaves: nothing says more.
    assert verify(tmp_path, every=19).ok
    # Without the private key, nothing on the machine vouched for the ledger's length.
    (tmp_path / KEY_FILE).unlink()
    assert verify(tmp_path, every=10).ok


async def test_checkpoints_re_signed_with_a_new_key_beside_the_original_are_caught(
    tmp_path: Path,
) -> None:
    chain = checkpoints_in(await signed(tmp_path))
    original = load_verifier(tmp_path)
    assert original is not None
    cut(tmp_path, 14)
    # A new key re-signs the chain up to the cut, and its public half replaces checkpoint.pub.
    new_key, previous, lines = Ed25519PrivateKey.generate(), CHAIN_START, []
    for old in chain[:4]:
        checkpoint = Checkpoint(old.seq, old.head, old.time, "", old.number, previous)
        lines.append(line_of(checkpoint, new_key))
        previous = checkpoint.link
    rewrite(tmp_path, lines)
    new_public = new_key.public_key().public_bytes_raw().hex()
    (tmp_path / PUBLIC_FILE).write_text(f"{new_public}\n")
    stated = load_verifier(tmp_path)
    assert stated is not None
    assert failure(tmp_path) == (
        f"checkpoint.pub ({stated.fingerprint}) is not the public key of checkpoint.key"
        f" ({original.fingerprint}) beside it: the checkpoints were re-signed with another key"
    )
    # With the original key gone too, the key fingerprint the chat holds still tells.
    (tmp_path / KEY_FILE).unlink()
    assert verify(tmp_path).ok
    report = verify(tmp_path, against=original.fingerprint)
    assert not report.ok
    assert report.reason == (
        f"re-keyed: checkpoint.pub is {stated.fingerprint}, not the key fingerprint"
        f" {original.fingerprint}: the checkpoints were signed with another key"
    )


async def test_the_key_fingerprint_is_reported_and_checked(tmp_path: Path) -> None:
    await signed(tmp_path)
    key = load_verifier(tmp_path)
    assert key is not None
    report = verify(tmp_path, against=key.fingerprint.upper().replace("KEY", "key"))
    assert report.ok, report.reason
    assert report.key == key.fingerprint
    assert report.key.startswith("key:")
    assert len(report.key) == len("key:") + 16
    (tmp_path / PUBLIC_FILE).unlink()
    (tmp_path / KEY_FILE).unlink()
    (tmp_path / CHECKPOINTS_FILE).unlink()
    gone = verify(tmp_path, against=key.fingerprint)
    assert gone.reason == (
        f"re-keyed: no checkpoint.pub here, but the key fingerprint {key.fingerprint} names one"
    )


async def test_a_legacy_file_still_loads_and_the_numbered_chain_continues_from_it(
    tmp_path: Path,
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for i in range(6):
            await ledger.append_durable(Receipt("command", f"old{i}"))
    key = private_key_made(tmp_path)
    old = [Checkpoint(s, head_at(tmp_path, s), "2024-05-01T00:00:00Z", "", 0, "") for s in (3, 6)]
    rewrite(tmp_path, [line_of(c, key) for c in old])
    assert verify(tmp_path).ok
    cp = checkpointer(tmp_path)
    async with SqliteLedger(tmp_path / "ledger.db", checkpoints=cp) as ledger:
        await ledger.append_durable(Receipt("command", "new"))
    chain = checkpoints_in((tmp_path / CHECKPOINTS_FILE).read_text().splitlines())
    assert [c.number for c in chain] == [0, 0, 1]
    assert chain[2].previous == chain[1].link
    report = verify(tmp_path)
    assert report.ok, report.reason
    assert report.checkpoints == 3


def private_key_made(home: Path) -> Ed25519PrivateKey:
    CheckpointSigner.load_or_create(home)
    return private_key(home)


@pytest.mark.parametrize(
    "change",
    [{"prev": None}, {"n": None}, {"n": -1}, {"n": "2"}, {"n": True}, {"prev": 7}, {"n": 0}],
    ids=["number-alone", "link-alone", "negative", "text", "bool", "link-not-text", "zero"],
)
async def test_a_half_numbered_line_is_not_a_checkpoint(
    tmp_path: Path, change: dict[str, object]
) -> None:
    lines = await signed(tmp_path)
    item = json.loads(lines[1])
    for name, value in change.items():
        if value is None:
            del item[name]
        else:
            item[name] = value
    rewrite(tmp_path, [lines[0], json.dumps(item) + "\n", *lines[2:]])
    assert failure(tmp_path) == "checkpoints.jsonl line 2: not a checkpoint"
