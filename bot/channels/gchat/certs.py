"""Google's public signing certificates, fetched with aiohttp and cached as Cache-Control says."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable

import aiohttp

from core.errors import ProviderUnavailable

log = logging.getLogger(__name__)

DEFAULT_MAX_AGE = 300.0  # seconds, when the response says nothing
FORCED_REFRESH_GAP = 30.0  # seconds; unknown key ids refetch at most this often
FETCH_TIMEOUT = aiohttp.ClientTimeout(total=10)  # the health check awaits this fetch too
_MAX_AGE = re.compile(r"max-age=(\d+)")

Certs = dict[str, str]


def max_age(cache_control: str | None) -> float:
    """How long a response may be kept, from its Cache-Control header."""
    if not cache_control:
        return DEFAULT_MAX_AGE
    lowered = cache_control.lower()
    if "no-store" in lowered or "no-cache" in lowered:
        return 0.0
    match = _MAX_AGE.search(lowered)
    return float(match.group(1)) if match else DEFAULT_MAX_AGE


class CertCache:
    """A key-id -> PEM certificate map from one URL, refetched when it goes stale or when a
    token names a key it does not hold (Google rotates keys)."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        url: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._session = session
        self._url = url
        self._clock = clock
        self._certs: Certs = {}
        self._expires = 0.0
        self._forced = float("-inf")
        self._lock = asyncio.Lock()

    async def get(self, *, need: str | None = None) -> Certs:
        """The current certificates; `need` (a key id) forces a refetch if it is missing.

        Raises ProviderUnavailable when nothing usable can be had.
        """
        async with self._lock:
            now = self._clock()
            if now >= self._expires:
                await self._refresh()
            elif (
                need is not None
                and need not in self._certs
                and now - self._forced >= FORCED_REFRESH_GAP  # forged key ids cannot flood
            ):
                self._forced = now
                await self._refresh()
            return self._certs

    async def _refresh(self) -> None:
        try:
            async with self._session.get(self._url, timeout=FETCH_TIMEOUT) as response:
                response.raise_for_status()
                data = await response.json(content_type=None)
                cache_control = response.headers.get("Cache-Control")
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            if self._certs:
                log.warning("gchat: could not refresh certificates (%s); keeping the old", exc)
                return
            raise ProviderUnavailable(f"gchat: cannot fetch certificates: {exc}") from None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise ProviderUnavailable("gchat: the certificate URL did not return a key map")
        self._certs = {str(k): v for k, v in data.items()}
        self._expires = self._clock() + max_age(cache_control)
