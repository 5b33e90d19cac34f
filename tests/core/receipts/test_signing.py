"""The checkpoint key pair: made once (0600), read back, checked against its public half, and
every file that is not a key refused with its name."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from core.errors import StorageError
from core.receipts.base import CHAIN_START
from core.receipts.signing import (
    KEY_FILE,
    PUBLIC_FILE,
    CheckpointSigner,
    load_verifier,
    read_keys,
)
from tests.fakes.descriptors import leaves_no_file_open

HEAD = "ab" * 32


def test_the_key_is_made_once_private_and_read_back_the_same(tmp_path: Path) -> None:
    made = CheckpointSigner.load_or_create(tmp_path)
    assert made.created
    assert stat.S_IMODE(os.stat(tmp_path / KEY_FILE).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / PUBLIC_FILE).st_mode) == 0o600
    assert (tmp_path / PUBLIC_FILE).read_text() == f"{made.verifier.hex}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [KEY_FILE, PUBLIC_FILE]  # no temp left
    os.chmod(tmp_path / KEY_FILE, 0o644)
    again = CheckpointSigner.load_or_create(tmp_path)
    assert not again.created
    assert again.verifier.hex == made.verifier.hex
    assert stat.S_IMODE(os.stat(tmp_path / KEY_FILE).st_mode) == 0o600  # made private again


def test_the_key_fingerprint_is_the_start_of_the_public_keys_sha256(tmp_path: Path) -> None:
    verifier = CheckpointSigner.load_or_create(tmp_path).verifier
    digest = hashlib.sha256(bytes.fromhex(verifier.hex)).hexdigest()
    assert len(verifier.hex) == 64
    assert verifier.digest == digest
    assert verifier.fingerprint == f"key:{digest[:16]}"


def test_checkpoints_are_numbered_and_linked_and_their_signatures_checked(tmp_path: Path) -> None:
    signer = CheckpointSigner.load_or_create(tmp_path)
    first = signer.sign(3, HEAD, "2030-01-01T00:00:00Z", None)
    second = signer.sign(6, "cd" * 32, "2030-01-01T00:01:00Z", first)
    assert (first.number, first.previous) == (1, CHAIN_START)
    assert (second.number, second.previous) == (2, first.link)
    verifier = load_verifier(tmp_path)
    assert verifier is not None
    assert verifier.valid(first)
    assert verifier.valid(second)
    assert not verifier.valid(replace(first, seq=4))  # a statement changed under its signature
    assert not verifier.valid(replace(first, signature=second.signature))
    assert not verifier.valid(replace(first, signature="not hex"))
    (tmp_path / "other").mkdir()
    another_key = CheckpointSigner.load_or_create(tmp_path / "other").verifier
    assert not another_key.valid(first)


def test_a_public_key_that_is_not_the_private_keys_is_refused_at_start(tmp_path: Path) -> None:
    CheckpointSigner.load_or_create(tmp_path)
    (tmp_path / PUBLIC_FILE).write_text("00" * 32 + "\n")
    with pytest.raises(StorageError) as caught:
        CheckpointSigner.load_or_create(tmp_path)
    assert (
        str(caught.value)
        == f"{tmp_path / PUBLIC_FILE}: not the public key of {tmp_path / KEY_FILE}"
    )


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (KEY_FILE, b"not a key", "checkpoint.key: cannot read the checkpoint key: "),
        (KEY_FILE, "ec", "checkpoint.key: not an ed25519 key"),
        (PUBLIC_FILE, b"zz\n", "checkpoint.pub: cannot read the checkpoint public key: "),
        (PUBLIC_FILE, b"abcd\n", "checkpoint.pub: cannot read the checkpoint public key: "),
        (PUBLIC_FILE, "\u00e9".encode(), "checkpoint.pub: cannot read the checkpoint public key"),
    ],
)
def test_a_file_that_is_not_a_key_is_named(
    tmp_path: Path, name: str, content: bytes | str, message: str
) -> None:
    CheckpointSigner.load_or_create(tmp_path)
    data = ec_key() if content == "ec" else content
    assert isinstance(data, bytes)
    (tmp_path / name).write_bytes(data)
    for read in (CheckpointSigner.load_or_create, read_keys):
        with pytest.raises(StorageError) as caught:
            read(tmp_path)
        assert str(caught.value).startswith(f"{tmp_path}/{message}")


def ec_key() -> bytes:
    key = generate_private_key(SECP256R1())
    return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())


def test_a_home_where_no_key_can_be_written_is_named(tmp_path: Path) -> None:
    home = tmp_path / "a-file"
    home.write_text("")
    with pytest.raises(StorageError) as caught:
        CheckpointSigner.load_or_create(home)
    assert str(caught.value).startswith(
        f"{home / KEY_FILE}: cannot read or create the checkpoint key"
    )


def test_a_public_key_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    CheckpointSigner.load_or_create(tmp_path)
    (tmp_path / PUBLIC_FILE).unlink()
    (tmp_path / f".{PUBLIC_FILE}.tmp").mkdir()  # where it would be written first
    with pytest.raises(StorageError) as caught:
        CheckpointSigner.load_or_create(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / PUBLIC_FILE}: cannot create the public key")


def test_the_key_files_say_what_vouches_and_whether_they_belong_together(tmp_path: Path) -> None:
    none = read_keys(tmp_path)
    assert (none.verifier, none.private, none.mismatch) == (None, False, None)
    made = CheckpointSigner.load_or_create(tmp_path).verifier
    both = read_keys(tmp_path)
    assert (both.verifier is not None and both.verifier.hex, both.private, both.mismatch) == (
        made.hex,
        True,
        None,
    )
    (tmp_path / PUBLIC_FILE).unlink()
    derived = read_keys(tmp_path)
    assert (derived.verifier is not None and derived.verifier.hex, derived.private) == (
        made.hex,
        True,
    )
    (tmp_path / PUBLIC_FILE).write_text(f"{made.hex}\n")
    (tmp_path / KEY_FILE).unlink()
    public_only = read_keys(tmp_path)
    assert (public_only.verifier is not None and public_only.verifier.hex) == made.hex
    assert (public_only.private, public_only.mismatch) == (False, None)


def test_making_the_keys_leaves_no_file_open(tmp_path: Path) -> None:
    with leaves_no_file_open():
        CheckpointSigner.load_or_create(tmp_path)
