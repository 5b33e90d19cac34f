"""The receipt page's front door and search: `/` says how to get in, https means Secure
cookies, and no search text gives a server error."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from bot.app import assemble
from bot.web import build_web_app
from core.config import load_settings
from core.health.snapshot import HealthMonitor
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt
from core.security.viewer_access import ViewerAccess
from core.state import open_state_db

Client = TestClient[web.Request, web.Application]
MakeClient = Callable[[web.Application], Awaitable[Client]]
FUZZ_QUERIES = 10_000


@pytest.fixture
async def ledger(tmp_path: Path) -> AsyncIterator[SqliteLedger]:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        for text in ("tool_run shell.exec ls", "my_notes saved", "plain words", "naïve café"):
            ledger.append(Receipt("tool_run", "shell.exec", inputs={"text": text}))
        await ledger.flush_search()
        yield ledger


@pytest.fixture
async def access(tmp_path: Path) -> AsyncIterator[ViewerAccess]:
    db = await open_state_db(tmp_path / "state.db")
    access = ViewerAccess(db, b"k" * 32, link_ttl=600)
    await access.setup()
    yield access
    await db.close()


async def client_for(
    make: MakeClient, ledger: SqliteLedger, access: ViewerAccess, *, secure: bool = False
) -> Client:
    app = build_web_app(ledger=ledger, access=access, health=HealthMonitor(), secure_cookies=secure)
    client = await make(app)
    response = await client.get("/receipts", params={"t": await access.issue_link()})
    assert response.status == 200
    return client


async def test_the_front_page_says_how_to_get_a_link(
    aiohttp_client: MakeClient, ledger: SqliteLedger, access: ViewerAccess
) -> None:
    client = await aiohttp_client(
        build_web_app(ledger=ledger, access=access, health=HealthMonitor())
    )
    response = await client.get("/")
    assert response.status == 200
    text = await response.text()
    assert "send <code>/receipts</code>" in text
    assert "works once, for 10" in text
    assert 'href="/receipts"' in text  # the header link, and nothing else to open
    assert "You are signed in" not in text
    await client.get("/receipts", params={"t": await access.issue_link()})
    assert "You are signed in" in await (await client.get("/")).text()


async def test_an_https_public_url_makes_the_cookie_secure(
    aiohttp_client: MakeClient, ledger: SqliteLedger, access: ViewerAccess
) -> None:
    app = build_web_app(ledger=ledger, access=access, health=HealthMonitor(), secure_cookies=True)
    client = await aiohttp_client(app)
    response = await client.get("/receipts", params={"t": await access.issue_link()})
    assert response.status == 200
    cookie = response.headers["Set-Cookie"]
    assert "Secure" in cookie
    assert "HttpOnly" in cookie


async def test_the_app_sets_secure_cookies_when_its_public_url_is_https(tmp_path: Path) -> None:
    for public_url, secure in (("https://lancelot.example.org", True), (None, False)):
        env = {"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_WEB_PORT": "0"}
        if public_url:
            env["LANCELOT_PUBLIC_URL"] = public_url
        async with assemble(load_settings(environ=env)) as app:
            token = await app.viewer.issue_link()
            async with aiohttp.ClientSession() as http:
                response = await http.get(f"{app.web_url}/receipts", params={"t": token})
                assert response.status == 200
                assert ("Secure" in response.headers["Set-Cookie"]) is secure


@pytest.mark.parametrize(
    ("words", "found"),
    [("tool_run", 4), ("my_notes", 1), ("shell.exec", 4), ('"plain', 1), ("naive", 1)],
)
async def test_words_with_punctuation_are_searched(
    aiohttp_client: MakeClient,
    ledger: SqliteLedger,
    access: ViewerAccess,
    words: str,
    found: int,
) -> None:
    client = await client_for(aiohttp_client, ledger, access)
    response = await client.get("/receipts", params={"q": words})
    assert response.status == 200
    assert (await response.text()).count('class="when">#') == found


def random_query(rng: random.Random) -> str:
    """Text a person, a paste or an attacker might type: FTS5 syntax, quotes, underscores,
    any Unicode (unassigned code points and lone surrogates included)."""
    syntax = [*"_-*\"():^+{}[].,;'\\/ \t", "AND", "OR", "NOT", "NEAR", "tool_run"]
    parts = []
    for _ in range(rng.randint(1, 12)):
        roll = rng.random()
        if roll < 0.4:
            parts.append(rng.choice(syntax))
        elif roll < 0.6:
            parts.append(rng.choice(["ls", "shell", "naïve", "my_notes", "x" * 300]))
        elif roll < 0.85:
            parts.append(chr(rng.randint(0x80, 0x2FFFF)))
        else:
            parts.append(chr(rng.randint(1, 0x10FFFF)))
    return "".join(parts)


async def test_no_search_text_gives_a_server_error(
    aiohttp_client: MakeClient, ledger: SqliteLedger, access: ViewerAccess
) -> None:
    client = await client_for(aiohttp_client, ledger, access)
    rng = random.Random(18)
    statuses: dict[int, int] = {}
    for _ in range(FUZZ_QUERIES):
        query = random_query(rng).encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        response = await client.get("/receipts", params={"q": query})
        statuses[response.status] = statuses.get(response.status, 0) + 1
        response.release()
    assert statuses == {200: FUZZ_QUERIES}
