"""The ledger's signing key: an ed25519 pair under LANCELOT_HOME, made on first use (0600).

The private key signs checkpoints; the public key (a file of its own) is all verification
needs, so an exported ledger and its checkpoints can be checked elsewhere.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
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
from core.receipts.base import Checkpoint

KEY_FILE = "checkpoint.key"
PUBLIC_FILE = "checkpoint.pub"


def checkpoint_message(seq: int, head: str, time: str) -> bytes:
    """The bytes a checkpoint's signature covers."""
    return f"lancelot-checkpoint-v1\n{seq}\n{head}\n{time}\n".encode("ascii")


@dataclass(frozen=True, slots=True)
class CheckpointVerifier:
    """Checks checkpoint signatures with the public key."""

    public: Ed25519PublicKey

    def valid(self, checkpoint: Checkpoint) -> bool:
        """True when the signature is the key's over exactly this checkpoint."""
        try:
            message = checkpoint_message(checkpoint.seq, checkpoint.head, checkpoint.time)
            self.public.verify(bytes.fromhex(checkpoint.signature), message)
        except (InvalidSignature, ValueError, UnicodeError):
            return False
        return True

    @property
    def hex(self) -> str:
        """The raw public key in hex (what checkpoint.pub holds)."""
        return self.public.public_bytes(Encoding.Raw, PublicFormat.Raw).hex()


class CheckpointSigner:
    """Signs checkpoints with the private key."""

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private
        self.verifier = CheckpointVerifier(private.public_key())

    def sign(self, seq: int, head: str, time: str) -> Checkpoint:
        """A checkpoint of the ledger at `seq` whose last hash is `head`."""
        signature = self._private.sign(checkpoint_message(seq, head, time)).hex()
        return Checkpoint(seq, head, time, signature)

    @classmethod
    def load_or_create(cls, home: Path) -> CheckpointSigner:
        """The key pair in `home`, made (0600) on first use. StorageError names the file
        that cannot be read or written, or a public key that is not the private key's."""
        path = home / KEY_FILE
        try:
            if not path.exists():
                _write_private(path, Ed25519PrivateKey.generate())
            os.chmod(path, 0o600)
            private = load_pem_private_key(path.read_bytes(), password=None)
        except (OSError, ValueError) as exc:
            raise StorageError(f"{path}: cannot read or create the checkpoint key: {exc}") from None
        if not isinstance(private, Ed25519PrivateKey):
            raise StorageError(f"{path}: not an ed25519 key")
        signer = cls(private)
        public = home / PUBLIC_FILE
        try:
            if not public.exists():
                _write_new(public, f"{signer.verifier.hex}\n".encode())
            found = public.read_text(encoding="ascii").strip()
        except (OSError, UnicodeError) as exc:
            raise StorageError(f"{public}: cannot read or create the public key: {exc}") from None
        if found != signer.verifier.hex:
            raise StorageError(f"{public}: not the public key of {path}")
        return signer


def load_verifier(home: Path) -> CheckpointVerifier | None:
    """The public key in `home` (checkpoint.pub, else derived from checkpoint.key); None when
    neither exists. StorageError for a file that is not a key."""
    public = home / PUBLIC_FILE
    try:
        if public.exists():
            raw = bytes.fromhex(public.read_text(encoding="ascii").strip())
            return CheckpointVerifier(Ed25519PublicKey.from_public_bytes(raw))
        private = home / KEY_FILE
        if private.exists():
            key = load_pem_private_key(private.read_bytes(), password=None)
            if isinstance(key, Ed25519PrivateKey):
                return CheckpointVerifier(key.public_key())
            raise ValueError("not an ed25519 key")
    except (OSError, ValueError, UnicodeError) as exc:
        raise StorageError(f"{public}: cannot read the checkpoint public key: {exc}") from None
    return None


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
