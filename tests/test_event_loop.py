"""The tests run on the event loop production serves on."""

from __future__ import annotations

import asyncio

import uvloop


async def test_async_tests_run_on_uvloop() -> None:
    assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
