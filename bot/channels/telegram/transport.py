"""Bot API calls over aiohttp, each posted as one JSON object.

python-telegram-bot makes its HTTP calls through a `BaseRequest`, httpx by default, and
documents that interface for swapping the transport. Lancelot swaps it for aiohttp (already
its web server and Google Chat client): on loopback, one call cost about 0.9 ms of CPU through
httpx and 0.12 ms through aiohttp, and every owner message takes two or three calls.

A call without files goes as a JSON object rather than PTB's form, whose values are
JSON-encoded and then percent-encoded character by character in Python (the Bot API takes
both: https://core.telegram.org/bots/api#making-requests). Uploads go as a multipart form.
Errors are raised as PTB's own request classes raise them, so PTB maps them the same way.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
import urllib.request
from typing import Any

import aiohttp
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

JSON_TYPE = "application/json"
# An upload is given its bytes' time at this rate on top of its timeouts (64 KiB/s, about half
# a megabit: a 50 MB document, Telegram's limit for bots, may take 13 minutes).
UPLOAD_RATE = 64 * 1024
POOL_FULL = (
    "Pool timeout: All connections in the connection pool are occupied. Request was *not* "
    "sent to Telegram. Consider adjusting the connection pool size or the pool timeout."
)


class AiohttpRequest(BaseRequest):
    """PTB's HTTP interface on an aiohttp session; the defaults are HTTPXRequest's.

    aiohttp has no write timeout of its own: a call is bounded as a whole (call_timeout), and
    a stalled answer by the read timeout alone.
    """

    def __init__(
        self,
        connection_pool_size: int = 1,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        media_write_timeout: float | None = 20.0,
        verify_tls: bool = True,
    ) -> None:
        self._pool_size = connection_pool_size
        self._read = read_timeout
        self._write = write_timeout
        self._connect = connect_timeout
        self._pool = pool_timeout
        self._media_write = media_write_timeout
        self._verify_tls = verify_tls
        self._session: aiohttp.ClientSession | None = None
        self._slots = asyncio.Semaphore(connection_pool_size)
        self._proxies: dict[tuple[str, str], str | None] = {}  # (scheme, host) -> its proxy

    @property
    def read_timeout(self) -> float | None:
        return self._read

    async def initialize(self) -> None:
        if self._session is not None and not self._session.closed:
            return
        # Each call takes a slot first (so a full pool is told apart, as PTB's pool timeout),
        # and the connector never holds more connections than there are slots.
        self._slots = asyncio.Semaphore(self._pool_size)
        connector = aiohttp.TCPConnector(limit=self._pool_size, ssl=self._verify_tls)
        # The proxy is chosen here (proxy_for), not by aiohttp's trust_env: that reads the
        # environment and ~/.netrc again in a worker thread on every call, which cost a
        # message in a burst about a fifth of its CPU.
        self._proxies = {}
        self._session = aiohttp.ClientSession(
            connector=connector, headers={"User-Agent": self.USER_AGENT}
        )

    async def shutdown(self) -> None:
        """Close the session: a call still in flight fails with a NetworkError."""
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = BaseRequest.DEFAULT_NONE,
        write_timeout: Any = BaseRequest.DEFAULT_NONE,
        connect_timeout: Any = BaseRequest.DEFAULT_NONE,
        pool_timeout: Any = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        session = self._session
        if session is None or session.closed:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        body: Any = None
        headers: dict[str, str] | None = None
        files, sending = False, _upload_bytes(request_data)
        if request_data is not None and request_data.contains_files:
            files, body = True, _form(request_data)
        elif request_data is not None:
            body = json.dumps(request_data.parameters, ensure_ascii=False).encode()
            headers = {"Content-Type": JSON_TYPE}
        read = _given(read_timeout, self._read)
        connect = _given(connect_timeout, self._connect)
        write = _given(write_timeout, self._media_write if files else self._write)
        timeout = call_timeout(connect, write, read, sending)
        slots = self._slots
        try:
            async with asyncio.timeout(_given(pool_timeout, self._pool)):
                await slots.acquire()
        except TimeoutError:
            raise TimedOut(message=POOL_FULL) from None
        proxy = self._proxy(url)
        try:
            async with session.request(
                method,
                url,
                data=body,
                headers=headers,
                timeout=timeout,
                proxy=proxy,
            ) as response:
                return response.status, await response.read()
        except TimeoutError as err:  # aiohttp's own timeouts are TimeoutErrors too
            raise TimedOut from err
        except aiohttp.ClientError as err:
            raise NetworkError(f"aiohttp.{err.__class__.__name__}: {err}") from err
        except RuntimeError as err:
            if not session.closed:
                raise
            # The session was closed under the call (the poller's watchdog replaced it).
            raise NetworkError(f"aiohttp: session closed: {err}") from err
        finally:
            slots.release()

    def _proxy(self, url: str) -> str | None:
        """The proxy for `url`, read from the environment once per host while a session lasts."""
        parts = urllib.parse.urlsplit(url)
        origin = (parts.scheme, parts.hostname or "")
        if origin not in self._proxies:
            self._proxies[origin] = proxy_for(*origin)
        return self._proxies[origin]


def proxy_for(scheme: str, host: str) -> str | None:
    """The proxy the environment names for `scheme` (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, in
    either case) unless NO_PROXY exempts `host`, as httpx reads them; None for none. aiohttp
    sends credentials in its URL as the Proxy-Authorization."""
    proxies = urllib.request.getproxies_environment()
    if not host or urllib.request.proxy_bypass(host):  # NO_PROXY (from the environment on Linux)
        return None
    named = proxies.get(scheme) or proxies.get("all")
    if not named:
        return None
    return named if "://" in named else f"http://{named}"


def call_timeout(
    connect: float | None, write: float | None, read: float | None, sending: int | None = 0
) -> aiohttp.ClientTimeout:
    """A call's bounds: connecting, the wait for each piece of the answer, and the whole call
    (its three timeouts added up, plus for an upload of `sending` bytes the time they take at
    UPLOAD_RATE; unbounded when one of them is None, or the upload's size is unknown)."""
    parts = (connect, write, read)
    total = None
    if sending is not None and None not in parts:
        total = sum(p for p in parts if p is not None) + sending / UPLOAD_RATE
    return aiohttp.ClientTimeout(total=total, sock_connect=connect, sock_read=read)


def _upload_bytes(request_data: RequestData | None) -> int | None:
    """The bytes of a call's files (0 without any); None when one is a file handle of
    unknown size."""
    if request_data is None or not request_data.contains_files:
        return 0
    contents = [content for _, content, _ in request_data.multipart_data.values()]
    if all(isinstance(content, bytes) for content in contents):
        return sum(len(content) for content in contents if isinstance(content, bytes))
    return None


def _form(request_data: RequestData) -> aiohttp.FormData:
    """The multipart form of an upload: its parameters as fields, its files as file parts."""
    form = aiohttp.FormData()
    for name, value in request_data.json_parameters.items():
        form.add_field(name, value)
    for name, (filename, content, mimetype) in request_data.multipart_data.items():
        form.add_field(name, content, filename=filename, content_type=mimetype)
    return form


def _given(value: Any, default: float | None) -> float | None:
    """A timeout the call gave, or this client's (PTB marks 'not given' with a DefaultValue)."""
    return default if isinstance(value, type(BaseRequest.DEFAULT_NONE)) else value
