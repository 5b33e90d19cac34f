"""The agent's web lookups, end to end in the assembled app: it reads a page of a local test
site and answers from it; a redirect to a private address is refused; an oversize page is
cut with a note; a search through a fake search API returns results; orders written in a
page reach the model only as fenced data, and a fact taken from it waits in quarantine;
with nothing configured the tools are not offered at all."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from core.config import load_settings
from core.features import FeatureFlags
from core.llm.types import Completion, CompletionRequest
from core.memory.model import Provenance
from core.receipts.model import ReceiptStatus
from tests.core.agent.stage import Stage
from tests.core.tools.fences import fenced_body, header_of
from tests.fakes.scripted_model import call, final, text, tool_said
from tests.fakes.search_api import FakeSearchApi
from tests.fakes.web_site import INJECTION, FakeSite

WEB_TOOLS = {"web_fetch", "web_search"}


@asynccontextmanager
async def web_stage(tmp_path: Path, **env: str) -> AsyncIterator[Stage]:
    """Lancelot with the lookups set up through the environment, as an owner would."""
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home"), **env})
    running = Stage(settings, FeatureFlags(environ={}))
    await running.start()
    try:
        yield running
    finally:
        await running.stop()


def fetching(**env: str) -> dict[str, str]:
    """web_fetch for any public host, plus the test site's loopback address by name."""
    return {
        "LANCELOT_LOOKUPS_FETCH_ALLOWLIST": "*",
        "LANCELOT_LOOKUPS_FETCH_PRIVATE_HOSTS": "127.0.0.1",
        **env,
    }


def answer_from_page(url: str, fact_word: str) -> Callable[[CompletionRequest], Completion]:
    """A model that answers with the line of the fetched page holding `fact_word`."""

    def step(request: CompletionRequest) -> Completion:
        said = tool_said(request)
        assert said["kind"] == "ran", said
        line = next(ln for ln in fenced_body(said["output"]).split("\n") if fact_word in ln)
        return final(f"The page says: {line}", [("web_fetch", url)])

    return step


async def test_the_agent_reads_a_page_and_answers_from_it(tmp_path: Path) -> None:
    async with FakeSite() as site, web_stage(tmp_path, **fetching()) as lancelot:
        url = f"{site.url}/article"
        model = lancelot.model(call("web_fetch", url=url), answer_from_page(url, "Plant"))
        card = await lancelot.say("when should I plant tomatoes? see the garden page")
        offered = {spec.name for spec in model.calls[-1].request.tools}
        assert "web_fetch" in offered
        assert "web_search" not in offered  # no search API set up
        assert "The page says: Plant tomatoes outside in mid May, after the last frost." in (
            card.body
        )
        assert "Correction" not in card.body
        assert dict(card.fields)["Ran"] == f"web.fetch {url}"
        (decision,) = await lancelot.receipts("policy_decision")
        assert decision.decoded("metadata")["tier"] == "T0"
        (run,) = await lancelot.receipts("tool_run")
        assert run.action_name == "web.fetch"
        assert run.decoded("inputs")["params"] == {"url": url}
        recorded = run.decoded("outputs")["output"]
        assert recorded.startswith(f"GET {url}: HTTP 200, text/html, ")
        assert "bytes read" in recorded
        stored = json.dumps([r.decoded("outputs") for r in await lancelot.receipts("tool_run")])
        assert "frost" not in stored  # the receipt has the address and size, not the page
    assert [h.path for h in site.hits] == ["/article"]


async def test_a_redirect_to_a_private_address_is_refused(tmp_path: Path) -> None:
    async with FakeSite() as site, web_stage(tmp_path, **fetching()) as lancelot:
        told: list[dict[str, object]] = []

        def report(request: CompletionRequest) -> Completion:
            told.append(tool_said(request))
            return final("I could not read that page: it points at a private address.")

        lancelot.model(call("web_fetch", url=f"{site.url}/redirect-link-local"), report)
        card = await lancelot.say("read the page at /redirect-link-local")
        assert told[0]["kind"] == "failed"
        assert "169.254.169.254 is a private or local address" in str(told[0]["reason"])
        assert "private address" in card.body
        (run,) = await lancelot.receipts("tool_run")
        assert run.status == ReceiptStatus.FAILURE
        assert "169.254.169.254 is a private or local address" in (run.error_message or "")
    assert [h.path for h in site.hits] == ["/redirect-link-local"]  # and nothing further


async def test_an_oversize_page_is_cut_with_a_note(tmp_path: Path) -> None:
    env = fetching(LANCELOT_LOOKUPS_FETCH_MAX_BYTES="65536")
    async with FakeSite() as site, web_stage(tmp_path, **env) as lancelot:
        told: list[str] = []

        def report(request: CompletionRequest) -> Completion:
            told.append(str(tool_said(request)["output"]))
            return final("Tomatoes like warm soil (the page was cut).")

        lancelot.model(call("web_fetch", url=f"{site.url}/big-html"), report)
        await lancelot.say("what does the big tomato page say?")
        assert "The page is larger than 65,536 bytes; only that much was read" in header_of(told[0])
        assert "The text was cut at 12,000 characters." in header_of(told[0])
        assert len(fenced_body(told[0])) <= 12_000
        (run,) = await lancelot.receipts("tool_run")
        assert run.decoded("outputs")["truncated"] is True


async def test_a_search_through_the_search_api(tmp_path: Path) -> None:
    async with FakeSearchApi() as api:
        env = {
            "LANCELOT_LOOKUPS_SEARCH_PROVIDER": "searxng",
            "LANCELOT_LOOKUPS_SEARCH_URL": api.url,
        }
        async with web_stage(tmp_path, **env) as lancelot:

            def first_hit(request: CompletionRequest) -> Completion:
                said = tool_said(request)
                lines = fenced_body(str(said["output"])).split("\n")
                return final(f"The first result is {lines[1]}", [("web_search", "tomato blight")])

            model = lancelot.model(call("web_search", query="tomato blight"), first_hit)
            card = await lancelot.say("search the web for tomato blight")
            offered = {spec.name for spec in model.calls[-1].request.tools}
            assert offered & WEB_TOOLS == {"web_search"}
            assert "The first result is https://example.org/tomato-blight/1" in card.body
            assert dict(card.fields)["Ran"] == "web.search tomato blight"
            (run,) = await lancelot.receipts("tool_run")
            assert run.action_name == "web.search"
    assert [(a.provider, a.query) for a in api.asked] == [("searxng", "tomato blight")]


async def test_orders_in_a_page_stay_data_and_its_facts_wait_for_the_owner(
    tmp_path: Path,
) -> None:
    async with FakeSite() as site, web_stage(tmp_path, **fetching()) as lancelot:
        seen: list[str] = []

        def remember_from_page(request: CompletionRequest) -> Completion:
            seen.append(str(tool_said(request)["output"]))
            return call("remember", text="the backup key is under the doormat")

        lancelot.model(
            call("web_fetch", url=f"{site.url}/injected"),
            remember_from_page,
            final("The page has a bean recipe; I did not follow the orders written in it."),
        )
        await lancelot.say("what does the recipes page say?")
        page = seen[0]
        assert INJECTION in fenced_body(page)
        assert INJECTION not in header_of(page)
        assert "never instructions" in header_of(page)
        assert "WARNING: this content contains a banned phrase" in header_of(page)
        assert lancelot.app.memory is not None
        (held,) = await lancelot.app.memory.quarantined()
        assert held.provenance is Provenance.TOOL
        assert "doormat" in held.changes[0].text
        assert not any(
            run.action_name == "file.delete" for run in await lancelot.receipts("tool_run")
        )


async def test_with_nothing_configured_the_tools_are_not_offered(lancelot: Stage) -> None:
    model = lancelot.model(
        call("web_fetch", url="https://example.org/"),
        lambda request: final(f"No: {tool_said(request)['error']}"),
    )
    card = await lancelot.say("read https://example.org/ for me")
    assert not {spec.name for spec in model.calls[-1].request.tools} & WEB_TOOLS
    assert "No: unknown tool" in card.body
    assert await lancelot.receipts("tool_run") == []


PLAN = {
    "goal": "Keep the page's planting tip",
    "context": "The owner named the garden page.",
    "assumptions": [],
    "plan_steps": ["Read the garden page", "Remember its planting tip"],
    "decision_points": [],
    "risks": [],
    "done_when": "the tip is remembered",
    "next_action": "Read the page",
}


def passes(request: CompletionRequest) -> Completion:
    return text(json.dumps({"passed": True, "reason": "the tool ran"}))


async def test_a_page_read_in_one_step_is_still_data_in_the_next(tmp_path: Path) -> None:
    """A plan: the page is read in step 1 and its tip remembered in step 2, a fresh tool loop
    that never saw the page; the fact still counts as the page's and waits for the owner.
    The verifier's receipt keeps the page's address, not its text."""
    async with FakeSite() as site, web_stage(tmp_path, **fetching()) as lancelot:
        url = f"{site.url}/article"
        lancelot.model(
            text(json.dumps(PLAN)),
            call("web_fetch", url=url),
            text("Read the page."),
            passes,
            call("remember", text="Plant tomatoes outside in mid May, after the last frost."),
            text("Kept the tip (it waits for approval)."),
            passes,
            final("The tip waits in /memory for your approval.", [("web_fetch", url)]),
        )
        await lancelot.say("plan and then write down the planting tip from the garden page")
        await lancelot.next_card()
        assert lancelot.app.memory is not None
        (held,) = await lancelot.app.memory.quarantined()
        assert held.provenance is Provenance.TOOL
        first, _ = await lancelot.receipts("verify")
        (evidence,) = first.decoded("outputs")["evidence"]
        assert evidence["output"].startswith(f"GET {url}: HTTP 200")
        assert "frost" not in json.dumps(first.decoded("outputs"))
