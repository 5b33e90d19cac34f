"""The inbox on disk: streamed in, hashed, never through a symlink, never a key file, and
nothing half-written left behind."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.events import FileKind, FileOffer
from core.files.inbox import FileRefused, Inbox
from core.tools.workspace import Workspace


async def chunks(data: bytes, size: int = 1000) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def offer(name: str, size: int | None = None) -> FileOffer:
    return FileOffer(FileKind.DOCUMENT, "ref", name, "application/octet-stream", size)


async def test_a_file_is_streamed_in_with_its_sha256(tmp_path: Path) -> None:
    inbox = Inbox(Workspace(tmp_path / "ws"), limit=1 << 20)
    data = bytes(range(256)) * 1000
    saved = await inbox.save(offer("data.bin"), chunks(data))
    assert saved.path == "inbox/data.bin"
    assert saved.size == len(data)
    assert saved.sha256 == hashlib.sha256(data).hexdigest()
    assert inbox.path_of(saved).read_bytes() == data
    assert [p.name for p in (tmp_path / "ws" / "inbox").iterdir()] == ["data.bin"]


async def test_an_inbox_that_is_a_symlink_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    workspace = Workspace(tmp_path / "ws")
    (tmp_path / "ws" / "inbox").symlink_to(outside)
    with pytest.raises(FileRefused) as refused:
        await Inbox(workspace, limit=1 << 20).save(offer("a.txt"), chunks(b"hello"))
    assert "inbox folder is not usable" in refused.value.user_message
    assert list(outside.iterdir()) == []


async def test_a_key_file_is_kept_out(tmp_path: Path) -> None:
    inbox = Inbox(Workspace(tmp_path / "ws"), limit=1 << 20)
    with pytest.raises(FileRefused) as refused:
        await inbox.save(offer("server.pem"), chunks(b"-----BEGIN PRIVATE KEY-----"))
    assert "key or credentials" in refused.value.user_message
    assert not (tmp_path / "ws" / "inbox" / "server.pem").exists()


async def test_a_stream_that_outgrows_the_limit_leaves_nothing(tmp_path: Path) -> None:
    inbox = Inbox(Workspace(tmp_path / "ws"), limit=10_000)
    closed: list[bool] = []

    async def endless() -> AsyncIterator[bytes]:
        try:
            while True:
                yield b"x" * 4096
        finally:
            closed.append(True)

    with pytest.raises(FileRefused):
        await inbox.save(offer("big.bin", size=100), endless())
    assert list((tmp_path / "ws" / "inbox").iterdir()) == []
    assert closed == [True]  # the download was closed, not left hanging
