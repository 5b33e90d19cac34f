"""The ledger's signing key: an ed25519 pair under LANCELOT_HOME, made on first use (0600).

The private key signs checkpoints; the public key (a file of its own) is all verification
needs, so an exported ledger and its checkpoints can be checked elsewhere.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
)

from core.errors import StorageError
from core.receipts.base import CHAIN_START, Checkpoint

KEY_FILE = "checkpoint.key"
PUBLIC_FILE = "checkpoint.pub"


@dataclass(frozen=True, slots=True)
class CheckpointVerifier:
    """Checks checkpoint signatures with the public key."""

    public: Ed25519PublicKey

    def valid(self, checkpoint: Checkpoint) -> bool:
        """True when the signature is the key's over exactly this checkpoint."""
        try:
            self.public.verify(bytes.fromhex(checkpoint.signature), checkpoint.message)
        except (InvalidSignature, ValueError, UnicodeError):
            return False
        return True

    @property
    def hex(self) -> str:
        """The raw public key in hex (what checkpoint.pub holds)."""
        return self.public.public_bytes(Encoding.Raw, PublicFormat.Raw).hex()

    @property
    def digest(self) -> str:
        """The SHA-256 of the raw public key, hex."""
        return hashlib.sha256(bytes.fromhex(self.hex)).hexdigest()

    @property
    def fingerprint(self) -> str:
        """What the owner can copy from a chat: `key:` and the key's digest's first 16 hex."""
        return f"key:{self.digest[:16]}"


class CheckpointSigner:
    """Signs checkpoints with the private key."""

    def __init__(self, private: Ed25519PrivateKey, *, created: bool = False) -> None:
        self._private = private
        self.verifier = CheckpointVerifier(private.public_key())
        self.created = created  # the key was made by this start (load_or_create)

    def sign(self, seq: int, head: str, time: str, after: Checkpoint | None) -> Checkpoint:
        """A checkpoint of the ledger at `seq` whose last hash is `head`, the next link of
        the chain after `after` (the first of a chain when None)."""
        number = after.number + 1 if after is not None else 1
        previous = after.link if after is not None else CHAIN_START
        unsigned = Checkpoint(seq, head, time, "", number, previous)
        return replace(unsigned, signature=self._private.sign(unsigned.message).hex())

    @classmethod
    def load_or_create(cls, home: Path) -> CheckpointSigner:
        """The key pair in `home`, made (0600) on first use. StorageError names the file
        that cannot be read or written, or a public key that is not the private key's."""
        path = home / KEY_FILE
        created = False
        try:
            if not path.exists():
                _write_private(path, Ed25519PrivateKey.generate())
                created = True
            os.chmod(path, 0o600)
        except OSError as exc:
            raise StorageError(f"{path}: cannot read or create the checkpoint key: {exc}") from None
        signer = cls(_read_private(path), created=created)
        public = home / PUBLIC_FILE
        try:
            if not public.exists():
                _write_new(public, f"{signer.verifier.hex}\n".encode())
        except OSError as exc:
            raise StorageError(f"{public}: cannot create the public key: {exc}") from None
        if _read_public(public).hex != signer.verifier.hex:
            raise StorageError(f"{public}: not the public key of {path}")
        return signer


@dataclass(frozen=True, slots=True)
class KeyFiles:
    """What a home's key files hold: the public key to check checkpoints with (checkpoint.pub,
    else derived from checkpoint.key), whether the private key is there, and why the two do
    not belong together, if they do not."""

    verifier: CheckpointVerifier | None
    private: bool
    mismatch: str | None


def read_keys(home: Path) -> KeyFiles:
    """The key files of `home` (blocking). StorageError names a file that is not a key."""
    public, private = home / PUBLIC_FILE, home / KEY_FILE
    stated = _read_public(public) if public.exists() else None
    derived = _read_private(private).public_key() if private.exists() else None
    if derived is None:
        return KeyFiles(stated, private=False, mismatch=None)
    own = CheckpointVerifier(derived)
    if stated is None:
        return KeyFiles(own, private=True, mismatch=None)
    mismatch = None
    if stated.hex != own.hex:
        mismatch = (
            f"{PUBLIC_FILE} ({stated.fingerprint}) is not the public key of {KEY_FILE}"
            f" ({own.fingerprint}) beside it: the checkpoints were re-signed with another key"
        )
    return KeyFiles(stated, private=True, mismatch=mismatch)


def load_verifier(home: Path) -> CheckpointVerifier | None:
    """The public key in `home` (checkpoint.pub, else derived from checkpoint.key); None when
    neither exists. StorageError for a file that is not a key."""
    return read_keys(home).verifier


def _read_private(path: Path) -> Ed25519PrivateKey:
    """The ed25519 private key in `path`; StorageError when it is not one."""
    try:
        key = load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise StorageError(f"{path}: cannot read the checkpoint key: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise StorageError(f"{path}: not an ed25519 key")
    return key


def _read_public(path: Path) -> CheckpointVerifier:
    """The public key in `path` (raw, hex); StorageError when it is not one."""
    try:
        raw = bytes.fromhex(path.read_text(encoding="ascii").strip())
        return CheckpointVerifier(Ed25519PublicKey.from_public_bytes(raw))
    except (OSError, ValueError, UnicodeError) as exc:
        raise StorageError(f"{path}: cannot read the checkpoint public key: {exc}") from None


def _write_private(path: Path, key: Ed25519PrivateKey) -> None:
    pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    _write_new(path, pem)


def _write_new(path: Path, data: bytes) -> None:
    """Write a file whole (0600): a temporary file, synced, then renamed into place."""
    temp = path.with_name(f".{path.name}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, path)
