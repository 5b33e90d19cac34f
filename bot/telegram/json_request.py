"""Bot API calls with a JSON body instead of a form.

python-telegram-bot posts every call as application/x-www-form-urlencoded, its values
JSON-encoded first and then percent-encoded character by character in Python: for a
600-character reply that is about a fifth of the call's CPU. The Bot API takes the same
parameters as a JSON object (https://core.telegram.org/bots/api#making-requests); json.dumps
does it in C. Uploads keep PTB's multipart form, and its errors are raised the same way.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, HTTPXRequest, RequestData

JSON = {"Content-Type": "application/json"}
POOL_FULL = (
    "Pool timeout: All connections in the connection pool are occupied. Request was *not* "
    "sent to Telegram. Consider adjusting the connection pool size or the pool timeout."
)


class JsonRequest(HTTPXRequest):
    """PTB's HTTPXRequest, posting a call without files as one JSON object."""

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
        if request_data is None or request_data.contains_files:
            return await super().do_request(
                url, method, request_data, read_timeout, write_timeout, connect_timeout,
                pool_timeout,
            )  # fmt: skip
        if self._client.is_closed:
            raise RuntimeError("This HTTPXRequest is not initialized!")
        body = json.dumps(request_data.parameters, ensure_ascii=False).encode()
        defaults = self._client.timeout
        timeout = httpx.Timeout(
            connect=_given(connect_timeout, defaults.connect),
            read=_given(read_timeout, defaults.read),
            write=_given(write_timeout, defaults.write),
            pool=_given(pool_timeout, defaults.pool),
        )
        try:
            res = await self._client.request(
                method=method,
                url=url,
                headers={"User-Agent": self.USER_AGENT, **JSON},
                timeout=timeout,
                content=body,
            )
        except httpx.TimeoutException as err:
            if isinstance(err, httpx.PoolTimeout):
                raise TimedOut(message=POOL_FULL) from err
            raise TimedOut from err
        except httpx.HTTPError as err:
            raise NetworkError(f"httpx.{err.__class__.__name__}: {err}") from err
        return res.status_code, res.content


def _given(value: Any, default: float | None) -> float | None:
    """A timeout the call gave, or the client's (PTB marks 'not given' with a DefaultValue)."""
    return default if isinstance(value, type(BaseRequest.DEFAULT_NONE)) else value
