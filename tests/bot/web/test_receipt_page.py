"""The web app: health endpoints and the read-only receipt viewer, as a browser sees them."""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiosqlite
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from bot.web import SESSION_COOKIE, build_web_app
from core.health.snapshot import HealthMonitor
from core.receipts import reader
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt, ReceiptStatus
from core.security.viewer_access import ViewerAccess
from core.state import open_state_db
from tests.fakes.spellings import other_spellings

Client = TestClient[web.Request, web.Application]
MakeClient = Callable[[web.Application], Awaitable[Client]]
PAGE_SIZE = 5
SECRET = b"k" * 32
COOKIE_OCTETS = frozenset(chr(c) for c in range(0x21, 0x7F)) - set('",;\\')


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def ledger(tmp_path: Path) -> AsyncIterator[SqliteLedger]:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        yield ledger


@pytest.fixture
async def state(tmp_path: Path) -> AsyncIterator[aiosqlite.Connection]:
    db = await open_state_db(tmp_path / "state.db")
    yield db
    await db.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def access(state: aiosqlite.Connection, clock: Clock) -> ViewerAccess:
    access = ViewerAccess(state, SECRET, link_ttl=600, session_ttl=3600, clock=clock)
    await access.setup()
    return access


@pytest.fixture
def health() -> HealthMonitor:
    return HealthMonitor()


@pytest.fixture
def app(ledger: SqliteLedger, access: ViewerAccess, health: HealthMonitor) -> web.Application:
    return build_web_app(ledger=ledger, access=access, health=health, page_size=PAGE_SIZE)


@pytest.fixture
async def client(aiohttp_client: MakeClient, app: web.Application) -> Client:
    return await aiohttp_client(app)


@pytest.fixture
async def signed_in(client: Client, access: ViewerAccess) -> Client:
    response = await client.get("/receipts", params={"t": await access.issue_link()})
    assert response.status == 200
    return client


async def store(ledger: SqliteLedger, *receipts: Receipt) -> None:
    for receipt in receipts:
        ledger.append(receipt)
    await ledger.flush_search()


async def page(client: Client, url: str = "/receipts", **params: str) -> str:
    """A page as text; /receipts one receipt a row (the first page groups them by request)."""
    if url == "/receipts":
        params.setdefault("view", "all")
    response = await client.get(url, params=params)
    assert response.status == 200, await response.text()
    return await response.text()


def seqs(page_html: str) -> list[int]:
    return [int(s) for s in re.findall(r'class="when">#(\d+)', page_html)]


def names(page_html: str) -> list[str]:
    return re.findall(r"</b> (\S+)</span>", page_html)


def older_link(page_html: str) -> str | None:
    found = re.search(r'href="([^"]+)" rel="next"', page_html)
    return html.unescape(found.group(1)) if found else None


# Health


async def test_live_always_answers_ok(client: Client) -> None:
    response = await client.get("/health/live")
    assert response.status == 200
    assert await response.json() == {"status": "ok"}


async def test_ready_is_503_until_startup_finishes_then_200(
    client: Client, health: HealthMonitor
) -> None:
    response = await client.get("/health/ready")
    assert response.status == 503
    assert "starting up" in (await response.json())["degraded_reasons"]
    health.mark_ready()
    response = await client.get("/health/ready")
    assert response.status == 200
    body = await response.json()
    assert body["ready"] is True
    assert body["degraded_reasons"] == []


async def test_ready_reports_a_failing_check(client: Client, health: HealthMonitor) -> None:
    async def disk_full() -> str | None:
        return "ledger: disk full"

    health.mark_ready()
    health.register("ledger", disk_full)
    response = await client.get("/health/ready")
    assert response.status == 503
    assert (await response.json())["degraded_reasons"] == ["ledger: disk full"]


# Access


@pytest.mark.parametrize("path", ["/receipts", "/receipts/abc", "/receipts?type=command"])
async def test_without_a_session_the_pages_ask_for_a_new_link(client: Client, path: str) -> None:
    response = await client.get(path)
    assert response.status == 401
    assert response.content_type == "text/html"
    assert "ask for a new link with /receipts in chat" in (await response.text()).lower()


async def test_a_link_sets_a_strict_http_only_cookie_and_drops_the_token(
    client: Client, access: ViewerAccess, ledger: SqliteLedger
) -> None:
    await store(ledger, Receipt("command", "status"))
    token = await access.issue_link()
    response = await client.get("/receipts", params={"t": token}, allow_redirects=False)
    assert response.status == 200
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=")
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    assert "Path=/" in cookie
    assert "Secure" not in cookie  # plain http in the test
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    body = await response.text()
    assert '<meta http-equiv="refresh" content="0;url=/receipts">' in body
    assert token not in body
    # The cookie alone now opens the pages.
    assert "status" in await page(client)


async def test_the_cookie_is_secure_behind_an_https_proxy(
    client: Client, access: ViewerAccess
) -> None:
    response = await client.get(
        "/receipts",
        params={"t": await access.issue_link()},
        headers={"X-Forwarded-Proto": "https"},
    )
    assert response.status == 200
    assert "Secure" in response.headers["Set-Cookie"]


async def test_a_link_works_only_once(client: Client, access: ViewerAccess) -> None:
    token = await access.issue_link()
    assert (await client.get("/receipts", params={"t": token})).status == 200
    client.session.cookie_jar.clear()  # another browser, never signed in
    second = await client.get("/receipts", params={"t": token})
    assert second.status == 401
    text = await second.text()
    assert "already been used" in text
    assert "/receipts in chat" in text
    assert "Set-Cookie" not in second.headers
    # It looks again on a navigation of its own (a cookie a chat app's navigation held back).
    assert 'http-equiv="refresh" content="0;url=/receipts?link=used"' in text
    again = await client.get("/receipts", params={"link": "used"})
    assert again.status == 401
    assert "already been used" in await again.text()


async def test_a_signed_in_browser_reopening_a_used_link_sees_the_list(
    client: Client, access: ViewerAccess
) -> None:
    token = await access.issue_link()
    assert (await client.get("/receipts", params={"t": token})).status == 200
    second = await client.get("/receipts", params={"t": token}, allow_redirects=False)
    assert second.status == 303
    assert second.headers["Location"] == "/receipts"
    assert "Set-Cookie" not in second.headers
    followed = await client.get("/receipts", params={"t": token})
    assert followed.status == 200
    assert "receipts in the ledger" in await followed.text()
    # The chat app held the cookie back; the page's own navigation sends it.
    assert (await client.get("/receipts", params={"link": "used"})).status == 200


async def test_an_expired_link_is_refused(
    client: Client, access: ViewerAccess, clock: Clock
) -> None:
    token = await access.issue_link()
    clock.now += 601
    response = await client.get("/receipts", params={"t": token})
    assert response.status == 401
    assert "expired" in await response.text()
    assert (await client.get("/receipts")).status == 401


async def test_a_made_up_link_is_refused(client: Client) -> None:
    response = await client.get("/receipts", params={"t": "guess"})
    assert response.status == 401


async def test_a_link_preview_fetch_does_not_spend_the_link(
    client: Client, access: ViewerAccess
) -> None:
    token = await access.issue_link()
    preview = await client.get(
        "/receipts", params={"t": token}, headers={"User-Agent": "TelegramBot (like TwitterBot)"}
    )
    assert preview.status == 200
    assert "Set-Cookie" not in preview.headers
    head = await client.head("/receipts", params={"t": token})
    assert head.status == 200
    assert "Set-Cookie" not in head.headers
    assert (await client.get("/receipts", params={"t": token})).status == 200


async def test_forged_and_foreign_cookies_are_refused(
    client: Client, state: aiosqlite.Connection, clock: Clock
) -> None:
    foreign = ViewerAccess(state, b"another secret, not ours", clock=clock).new_session()
    for cookie in (foreign, "v1.forged", foreign[:-2] + "AA"):
        response = await client.get("/receipts", headers={"Cookie": f"{SESSION_COOKIE}={cookie}"})
        assert response.status == 401


async def test_only_the_exact_spelling_of_a_session_cookie_opens_the_pages(
    client: Client, access: ViewerAccess
) -> None:
    body, mac = (await access.redeem(await access.issue_link())).split(".")
    # What a cookie's value can hold as it is (RFC 6265 cookie-octets; a parser cuts at a
    # space, so the server would read the genuine cookie).
    sendable = [s for s in other_spellings(mac) if all(c in COOKIE_OCTETS for c in s)]
    assert len(sendable) >= 40
    for spelling in sendable:
        cookie = f"{SESSION_COOKIE}={body}.{spelling}"
        response = await client.get("/receipts", headers={"Cookie": cookie})
        assert response.status == 401, repr(spelling)
    genuine = await client.get("/receipts", headers={"Cookie": f"{SESSION_COOKIE}={body}.{mac}"})
    assert genuine.status == 200


async def test_only_the_exact_spelling_of_a_link_signs_in(
    client: Client, access: ViewerAccess
) -> None:
    token = await access.issue_link()
    for spelling in other_spellings(token):
        response = await client.get("/receipts", params={"t": spelling})
        assert response.status == 401, repr(spelling)
        assert "Set-Cookie" not in response.headers
    assert (await client.get("/receipts", params={"t": token})).status == 200


async def test_an_expired_session_is_refused(signed_in: Client, clock: Clock) -> None:
    assert (await signed_in.get("/receipts")).status == 200
    clock.now += 3601
    assert (await signed_in.get("/receipts")).status == 401


# The list


async def test_the_list_shows_newest_first(signed_in: Client, ledger: SqliteLedger) -> None:
    await store(ledger, *(Receipt("command", f"step{i}") for i in range(3)))
    body = await page(signed_in)
    assert names(body) == ["step2", "step1", "step0"]
    assert seqs(body) == [3, 2, 1]
    assert "3 receipts in the ledger" in body


async def test_the_list_filters_by_type_and_status(signed_in: Client, ledger: SqliteLedger) -> None:
    await store(
        ledger,
        Receipt("command", "ok-command"),
        Receipt("command", "bad-command", status=ReceiptStatus.FAILURE),
        Receipt("router_decision", "bad-llm", status=ReceiptStatus.FAILURE),
        Receipt("tool_run", "ok-tool"),
    )
    assert names(await page(signed_in, type="command")) == ["bad-command", "ok-command"]
    assert names(await page(signed_in, status="failure")) == ["bad-llm", "bad-command"]
    assert names(await page(signed_in, type="command", status="failure")) == ["bad-command"]
    menu = await page(signed_in, type="router_decision")
    for action_type in ("command", "router_decision", "tool_run"):
        assert f'<option value="{action_type}"' in menu
    assert '<option value="router_decision" selected>' in menu


async def test_the_list_searches_text(signed_in: Client, ledger: SqliteLedger) -> None:
    await store(
        ledger,
        Receipt("command", "run", inputs={"cmd": "ls -la /srv/backups"}),
        Receipt("command", "run2", inputs={"cmd": "df -h"}),
        Receipt("tool_run", "fetch", outputs={"text": "nightly backups rotated"}),
    )
    assert names(await page(signed_in, q="backups")) == ["fetch", "run"]
    assert names(await page(signed_in, q="backups", type="tool_run")) == ["fetch"]
    assert names(await page(signed_in, q="nothing-like-this")) == []
    assert "No receipts match" in await page(signed_in, q="zzzz")


async def test_a_prefix_search_is_asked_for_with_a_star(
    signed_in: Client, ledger: SqliteLedger
) -> None:
    await store(
        ledger,
        Receipt("command", "a", inputs={"cmd": "backup"}),
        Receipt("command", "b", inputs={"cmd": "backups"}),
    )
    assert names(await page(signed_in, q="backup")) == ["a"]
    assert names(await page(signed_in, q="back*")) == ["b", "a"]


async def test_a_search_that_stops_early_says_so_and_goes_on(
    signed_in: Client, ledger: SqliteLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "SEARCH_CHUNK", 5)
    monkeypatch.setattr(reader, "SEARCH_MAX_SCAN", 10)
    await store(
        ledger,
        Receipt("tool_run", "old", inputs={"w": "alpha"}),
        *(Receipt("command", f"step{i}", inputs={"w": "alpha"}) for i in range(20)),
    )
    first = await page(signed_in, type="tool_run", q="alpha")
    assert names(first) == []
    assert "Older » searches further back" in first
    body, link = first, older_link(first)
    while link is not None:
        body = await page(signed_in, link)
        link = older_link(body)
    assert names(body) == ["old"]


async def test_paging_walks_back_without_duplicates_or_gaps(
    signed_in: Client, ledger: SqliteLedger
) -> None:
    await store(ledger, *(Receipt("command", f"step{i}") for i in range(12)))
    first = await page(signed_in)
    assert "Newest" not in first
    seen: list[int] = seqs(first)
    link = older_link(first)
    while link is not None:
        body = await page(signed_in, link)
        assert "Newest" in body
        seen += seqs(body)
        link = older_link(body)
    assert seen == list(range(12, 0, -1))


async def test_paging_keeps_the_filters(signed_in: Client, ledger: SqliteLedger) -> None:
    kinds = ["router_decision", "command"] * 7
    await store(
        ledger, *(Receipt(k, f"step{i}", inputs={"w": "alpha"}) for i, k in enumerate(kinds))
    )
    first = await page(signed_in, type="command", q="alpha")
    link = older_link(first)
    assert link is not None
    assert "type=command" in link
    assert "q=alpha" in link
    second = await page(signed_in, link)
    assert names(first) + names(second) == [f"step{i}" for i in (13, 11, 9, 7, 5, 3, 1)]
    assert older_link(second) is None


async def test_a_bad_cursor_is_a_400_page(signed_in: Client) -> None:
    response = await signed_in.get("/receipts", params={"before": "abc"})
    assert response.status == 400
    assert response.content_type == "text/html"


# The detail page


async def test_detail_shows_every_field_and_the_chain(
    signed_in: Client, ledger: SqliteLedger
) -> None:
    parent = await ledger.append_durable(
        Receipt("agent_request", "plan", quest_id="quest-42", inputs={"goal": "tidy"})
    )
    child_a = Receipt("tool_run", "step-a", parent_id=parent.id, quest_id="quest-42")
    child_b = Receipt(
        "tool_run",
        "step-b",
        parent_id=parent.id,
        status=ReceiptStatus.FAILURE,
        error_message="exit 2",
        duration_ms=12.5,
        token_count=321,
        cognition_tier="local",
        metadata={"attempt": 2},
        outputs={"stdout": "hello"},
    )
    await store(ledger, child_a, child_b)

    body = await page(signed_in, f"/receipts/{parent.id}")
    assert "quest-42" in body
    assert parent.hash in body
    assert parent.prev_hash in body
    assert f'href="/receipts/{child_a.id}"' in body
    assert f'href="/receipts/{child_b.id}"' in body
    assert body.index(child_a.id) < body.index(child_b.id)
    assert "&#34;goal&#34;: &#34;tidy&#34;" in body  # inputs, pretty-printed

    body = await page(signed_in, f"/receipts/{child_b.id}")
    assert f'href="/receipts/{parent.id}"' in body
    for text in ("step-b", "failure", "exit 2", "12.5 ms", "321", "local", "&#34;attempt&#34;: 2"):
        assert text in body
    assert "&#34;stdout&#34;: &#34;hello&#34;" in body


async def test_an_unknown_receipt_is_a_404_page(signed_in: Client) -> None:
    response = await signed_in.get("/receipts/no-such-receipt")
    assert response.status == 404
    assert response.content_type == "text/html"
    assert "no receipt with that id" in await response.text()


async def test_receipt_content_is_escaped(signed_in: Client, ledger: SqliteLedger) -> None:
    attack = "<script>alert(1)</script>"
    stored = await ledger.append_durable(
        Receipt("command", attack, inputs={"cmd": attack}, error_message=attack)
    )
    await ledger.flush_search()
    for url in ("/receipts", f"/receipts/{stored.id}"):
        body = await page(signed_in, url)
        assert "<script>" not in body
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


# Read-only and headers


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
@pytest.mark.parametrize("path", ["/receipts", "/receipts/x", "/health/live", "/nowhere"])
async def test_only_get_and_head_are_allowed(signed_in: Client, method: str, path: str) -> None:
    response = await signed_in.request(method, path)
    assert response.status == 405


async def test_routes_added_later_accept_their_own_methods(
    aiohttp_client: MakeClient, app: web.Application
) -> None:
    async def hook(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app.router.add_post("/telegram/webhook", hook)
    client = await aiohttp_client(app)
    assert (await client.post("/telegram/webhook")).status == 200
    assert (await client.put("/telegram/webhook")).status == 405


async def test_pages_carry_the_security_headers(signed_in: Client) -> None:
    for path in ("/receipts", "/receipts/missing", "/receipts?t=spent"):
        response = await signed_in.get(path)
        assert response.headers["Content-Security-Policy"] == (
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'"
        )
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["Referrer-Policy"] == "no-referrer"
        assert response.headers["Cache-Control"] == "no-store"


async def test_extra_routes_can_be_passed_in(
    aiohttp_client: MakeClient, ledger: SqliteLedger, access: ViewerAccess, health: HealthMonitor
) -> None:
    routes = web.RouteTableDef()

    @routes.post("/gchat/events")
    async def events(request: web.Request) -> web.Response:
        return web.json_response({"text": "hi"})

    app = build_web_app(ledger=ledger, access=access, health=health, routes=routes)
    client = await aiohttp_client(app)
    assert (await client.post("/gchat/events")).status == 200
    assert (await client.delete("/gchat/events")).status == 405


async def test_a_receipt_page_speaks_in_words(signed_in: Client, ledger: SqliteLedger) -> None:
    """Its heading reads as the receipt kind's line, not as the ledger's field names (those
    stay below, as facts)."""
    granted = Receipt("approval_granted", "shell.apply")
    asked = Receipt("command", "status", parent_id=granted.id)
    await store(ledger, granted, asked)
    body = await page(signed_in, f"/receipts/{granted.id}")
    heading = body.split("<h1>", 1)[1].split("</h1>", 1)[0]
    assert "approval granted: shell.apply" in heading
    assert "approval_granted" not in heading
    assert "command /status</a>" in body  # the child, in words too
    assert "<dt>Action type</dt><dd>approval_granted</dd>" in body
