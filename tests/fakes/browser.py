"""A real headless Chromium for page tests, driven over the DevTools protocol (aiohttp's
websocket client): open a page at a phone's size, read its DOM, take a screenshot."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp

from tests.ci import unavailable
from tests.fakes.processes import reap, spawn

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
)
LISTENING = re.compile(r"DevTools listening on (ws://\S+)")


def chromium_path() -> str:
    """The Chromium binary; skips the test (fails it under CI) when there is none."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    unavailable("no Chromium here (apt-get install chromium)", needs="Debian's chromium")


class Page:
    """One tab, spoken to over its DevTools websocket."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self._socket = socket
        self._ids = itertools.count(1)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a DevTools command; its result (events that come meanwhile are dropped)."""
        number = next(self._ids)
        await self._socket.send_json({"id": number, "method": method, "params": params})
        async with asyncio.timeout(30):
            while True:
                message = json.loads((await self._socket.receive()).data)
                if message.get("id") == number:
                    if "error" in message:
                        raise RuntimeError(f"{method}: {message['error']}")
                    return dict(message.get("result", {}))

    async def phone(self, width: int = 390, height: int = 844) -> None:
        """Lay pages out as a phone of this size does."""
        await self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=3,
            mobile=True,
        )

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (the page's CSP does not apply)."""
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    async def open(self, url: str, *, lands_on: str) -> None:
        """Navigate, then wait until the page at path `lands_on` has loaded (a refresh or a
        redirect on the way included)."""
        await self.call("Page.navigate", url=url)
        check = "location.pathname + location.search + ' ' + document.readyState"
        async with asyncio.timeout(30):
            while True:
                where = await self.evaluate(check)
                if where == f"{lands_on} complete":
                    return
                await asyncio.sleep(0.1)

    async def screenshot(self, path: Path) -> None:
        """Save the page as it is drawn (a record for people; tests check the DOM)."""
        shot = await self.call("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))


@contextlib.asynccontextmanager
async def chromium(profile: Path) -> AsyncIterator[Page]:
    """A fresh headless Chromium (its own profile in `profile`) and one of its tabs."""
    process = await spawn(
        chromium_path(),
        *FLAGS,
        f"--user-data-dir={profile}",
        "about:blank",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        async with asyncio.timeout(60):
            while not (found := LISTENING.search((await process.stderr.readline()).decode())):
                pass
        port = found.group(1).split("/")[2]
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://{port}/json/list") as response:
                tabs = [t for t in await response.json() if t.get("type") == "page"]
            async with http.ws_connect(tabs[0]["webSocketDebuggerUrl"], max_msg_size=0) as socket:
                drain = asyncio.create_task(_drain(process.stderr))
                try:
                    yield Page(socket)
                finally:
                    drain.cancel()
                    await asyncio.gather(drain, return_exceptions=True)
    finally:
        await reap(process)  # the browser and its zygote, renderers and GPU process


async def _drain(stream: asyncio.StreamReader) -> None:
    """Keep reading Chromium's log, so a full pipe never stalls it."""
    while await stream.readline():
        pass
