"""The inbox: files from the owner, streamed into `workspace/inbox/` under a safe name.

The bytes go to disk as they arrive (writes and hashing in a thread, a few hundred KB at a
time), so a large file never sits in memory and never stalls the event loop. A file that
grows past the limit while it streams is dropped; nothing half-written is left behind, and
an existing file is never overwritten (a second `report.pdf` becomes `report-2.pdf`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from core.errors import PermanentError, PolicyDenied
from core.events import Attachment, FileOffer
from core.files.names import safe_name
from core.tools.workspace import Workspace

FOLDER = "inbox"
WRITE_AT = 256 * 1024  # bytes gathered before one write (one thread hop)
MAX_TWINS = 1000


class FileRefused(PermanentError):
    """A file the inbox will not keep; `user_message` says why, in the owner's words."""


@dataclass(frozen=True, slots=True)
class _Writer:
    fd: int
    digest: hashlib._Hash

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self.fd, view)
            view = view[written:]
        self.digest.update(data)


def megabytes(size: int) -> str:
    """A size as the owner reads it: '2,048 MB', '1.5 MB', '12 KB'."""
    if size >= 100 * 1024 * 1024:
        return f"{size / 1024 / 1024:,.0f} MB"
    if size >= 1024 * 1024:
        return f"{size / 1024 / 1024:.1f} MB"
    return f"{max(1, round(size / 1024))} KB"


class Inbox:
    """Saves offered files in the workspace's inbox folder, up to `limit` bytes each."""

    def __init__(self, workspace: Workspace, limit: int) -> None:
        self._workspace = workspace
        self.limit = limit

    def check(self, offer: FileOffer) -> None:
        """Refuse, before any download, a file announced bigger than the limit."""
        if offer.size is not None and offer.size > self.limit:
            raise FileRefused(
                f"announced {offer.size} bytes, limit {self.limit}",
                user_message=f"It is {megabytes(offer.size)}; I take files up to "
                f"{megabytes(self.limit)} (LANCELOT_FILES_MAX_IN_MB), so I did not download it.",
            )

    def path_of(self, attachment: Attachment) -> Path:
        """Where a saved attachment is on disk (through the workspace guard)."""
        return self._workspace.resolve(attachment.path)

    async def save(self, offer: FileOffer, chunks: AsyncIterator[bytes]) -> Attachment:
        """Stream `chunks` into the inbox; the saved file's attachment. Raises FileRefused."""
        self.check(offer)
        name = safe_name(offer)
        try:
            folder = self._workspace.resolve(FOLDER)
            self._workspace.resolve(f"{FOLDER}/{name}")  # a key or credentials file: refused
            with self._workspace.directory(folder, create=True) as dir_fd:
                size, digest, final = await self._write(dir_fd, name, chunks)
        except PolicyDenied as exc:
            if exc.rule == "sensitive-path":
                why = f"{name} looks like a key or credentials file; I keep those out of here."
            else:  # the inbox is a symlink or a file: nothing is written through it
                why = f"the inbox folder is not usable ({exc})."
            raise FileRefused(str(exc), user_message=why) from None
        except OSError as exc:  # a full disk, a quota: the owner is told, nothing is kept
            raise FileRefused(
                f"writing {name}: {exc}",
                user_message=f"I could not write it to the inbox ({exc.strerror}).",
            ) from None
        return Attachment(offer.kind, f"{FOLDER}/{final}", offer.mime, size, digest)

    async def _write(
        self, dir_fd: int, name: str, chunks: AsyncIterator[bytes]
    ) -> tuple[int, str, str]:
        """Into a hidden part file, then under its name; (size, sha256, the name used)."""
        part = f".{secrets.token_hex(8)}.part"
        fd = os.open(
            part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd
        )
        try:
            try:
                size, digest = await self._stream(fd, chunks)
            finally:  # a download cut short (too big) closes its connection now
                aclose = getattr(chunks, "aclose", None)
                if aclose is not None:
                    await aclose()
            os.close(fd)
            fd = -1
            return size, digest, await asyncio.to_thread(_place, dir_fd, part, name)
        finally:
            if fd >= 0:
                os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part, dir_fd=dir_fd)

    async def _stream(self, fd: int, chunks: AsyncIterator[bytes]) -> tuple[int, str]:
        writer = _Writer(fd, hashlib.sha256())
        size, pending = 0, bytearray()
        async for chunk in chunks:
            size += len(chunk)
            if size > self.limit:
                raise FileRefused(
                    f"grew past {self.limit} bytes while downloading",
                    user_message=f"It grew past {megabytes(self.limit)} while downloading "
                    "(LANCELOT_FILES_MAX_IN_MB), so I dropped it.",
                )
            pending += chunk
            if len(pending) >= WRITE_AT:
                await asyncio.to_thread(writer.write, bytes(pending))
                pending.clear()
        if pending:
            await asyncio.to_thread(writer.write, bytes(pending))
        await asyncio.to_thread(os.fsync, fd)
        return size, writer.digest.hexdigest()


def _place(dir_fd: int, part: str, name: str) -> str:
    """Give the finished file its name without replacing anything (a hard link fails if the
    name exists); returns the name used."""
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    for n in range(1, MAX_TWINS + 1):
        candidate = name if n == 1 else f"{stem}-{n}{dot}{ext}"
        try:
            os.link(part, candidate, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except FileExistsError:
            continue
        return candidate
    raise FileRefused("too many files of that name", user_message=f"inbox/{name} exists too often.")
