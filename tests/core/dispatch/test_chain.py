"""The message chain, link by link and whole: the gate, the intake receipt, the
conversations, the commands and the agent, each alone, then in their order of precedence."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app import Lancelot
from core.bus import Bus
from core.commands.registry import CommandContext, CommandRegistry, Router
from core.dispatch.chain import Chain, Turn
from core.dispatch.commands import CommandLink
from core.dispatch.links import (
    NO_AGENT_REPLY,
    AgentLink,
    ConversationsLink,
    GateLink,
    IntakeReceiptLink,
    message_chain,
)
from core.events import Card, CardKind, Inbound
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.security.gate import InputGate
from core.security.ratelimit import SlidingWindowLimiter
from core.security.sanitizer import Sanitizer

MAP = Path(__file__).resolve().parents[3] / "docs" / "architecture.md"


def message(text: str) -> Turn:
    return Turn(Inbound("memory", "owner", "owner-chat", text), text)


def gate(max_chars: int = 100) -> InputGate:
    return InputGate(Sanitizer(), SlidingWindowLimiter(limit=60), max_chars)


@pytest.fixture
async def ledger(tmp_path: Path) -> AsyncIterator[SqliteLedger]:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        yield ledger


async def kinds(ledger: SqliteLedger) -> list[tuple[str, str]]:
    await ledger.flush()
    page = await ledger.page(ReceiptQuery(limit=50))
    return sorted((r.action_type, r.action_name) for r in page.receipts)


class Heard:
    """A feature's router whose conversation, command and free text say who answered."""

    def __init__(self, *, talking: bool) -> None:
        self.talking = talking  # the conversation takes plain messages (onboarding under way)
        self.router = Router("heard")
        self.router.command("ping", "answers pong", self.ping)
        self.router.word("Ping", "ping")
        self.router.converse(self.talk)
        agent = Router("agent")
        agent.answer_free_text(self.agent)
        self.registry = CommandRegistry()
        self.registry.include(self.router)
        self.registry.include(agent)

    async def ping(self, ctx: CommandContext) -> Card:
        return Card(kind=CardKind.REPLY, title="pong", body=ctx.args)

    async def talk(self, event: Inbound, text: str, receipt_id: str) -> Card | None:
        return Card(kind=CardKind.REPLY, title=f"conversation: {text}") if self.talking else None

    async def agent(self, event: Inbound, text: str, receipt_id: str) -> Card:
        return Card(kind=CardKind.REPLY, title=f"agent: {text}", body=receipt_id)


async def test_the_gate_refuses_with_a_receipt_and_cleans_what_it_lets_through(
    ledger: SqliteLedger,
) -> None:
    link = GateLink(gate(max_chars=10), ledger)
    refused = await link(message("x" * 11))
    assert isinstance(refused, Card)
    assert "11 characters" in refused.body
    passed = await link(message("hi\u200b there"))
    assert isinstance(passed, Turn)
    assert passed.text == "hi there"
    assert passed.gate_notes == ("stripped 1 invisible character",)
    assert await kinds(ledger) == [("input_refused", "size")]


async def test_the_intake_receipt_is_written_and_carried_on(ledger: SqliteLedger) -> None:
    passed = await IntakeReceiptLink(ledger)(message("hello"))
    assert isinstance(passed, Turn)
    assert passed.recorded
    await ledger.flush()
    stored = await ledger.get(passed.receipt_id)
    assert stored is not None
    assert (stored.action_type, stored.decoded("inputs")) == ("inbound", {"text": "hello"})


async def test_a_conversation_takes_plain_messages_never_commands() -> None:
    heard = Heard(talking=True)
    link = ConversationsLink(heard.registry)
    answered = await link(message("Ada"))
    assert isinstance(answered, Card)
    assert answered.title == "conversation: Ada"
    assert isinstance(await link(message("/ping")), Turn)
    heard.talking = False  # the conversation is over: plain messages go on
    assert isinstance(await link(message("Ada")), Turn)


async def test_the_commands_link_runs_a_command_or_a_word_with_a_receipt(
    ledger: SqliteLedger,
) -> None:
    link = CommandLink(Heard(talking=False).registry, Bus(), ledger)
    pong = await link(message("/ping@LancelotBot now"))
    assert isinstance(pong, Card)
    assert (pong.title, pong.body) == ("pong", "now")
    word = await link(message("ping!"))
    assert isinstance(word, Card)
    assert word.title == "pong"
    unknown = await link(message("/frobnicate"))
    assert isinstance(unknown, Card)
    assert "I don't know /frobnicate" in unknown.body
    assert isinstance(await link(message("hello")), Turn)
    assert await kinds(ledger) == [("command", "ping"), ("command", "ping")]


async def test_the_agent_link_answers_or_says_why_it_cannot() -> None:
    answered = await AgentLink(Heard(talking=False).registry, Bus())(message("hello"))
    assert isinstance(answered, Card)
    assert answered.title == "agent: hello"
    nobody = await AgentLink(CommandRegistry(), Bus())(message("hello"))
    assert isinstance(nobody, Card)
    assert nobody.body == NO_AGENT_REPLY


async def test_the_chain_runs_its_links_in_the_documented_order(ledger: SqliteLedger) -> None:
    chain = message_chain(gate(), ledger, CommandRegistry(), Bus())
    assert chain.names == ("input gate", "intake receipt", "conversations", "commands", "agent")


@pytest.mark.parametrize(
    ("talking", "text", "answer"),
    [
        (True, "hello", "conversation: hello"),  # a conversation before the agent
        (True, "/ping", "pong"),  # a command passes by the conversation
        (True, "ping", "conversation: ping"),  # a word is plain text to a conversation
        (False, "ping", "pong"),  # ... and a command's word otherwise
        (False, "hello", "agent: hello"),  # what nothing took goes to the agent
    ],
)
async def test_precedence_conversation_then_commands_then_agent(
    ledger: SqliteLedger, talking: bool, text: str, answer: str
) -> None:
    chain = message_chain(gate(), ledger, Heard(talking=talking).registry, Bus())
    turn, card = await chain.run(message(text))
    assert card is not None
    assert card.title == answer
    assert turn.recorded  # every answer hangs under the message's inbound receipt


async def test_a_refused_message_reaches_no_later_link(ledger: SqliteLedger) -> None:
    heard = Heard(talking=True)
    chain = message_chain(gate(max_chars=5), ledger, heard.registry, Bus())
    turn, card = await chain.run(message("/ping and a long tail"))
    assert card is not None
    assert card.title == "Not processed"
    assert not turn.recorded
    assert await kinds(ledger) == [("input_refused", "size")]


async def test_a_link_may_end_a_turn_silently() -> None:
    class Silent:
        name = "silent"

        async def __call__(self, turn: Turn) -> None:
            return None

    class Never:
        name = "never"

        async def __call__(self, turn: Turn) -> Card:
            raise AssertionError("a link after the one that ended the turn ran")

    turn, card = await Chain([Silent(), Never()]).run(message("hi"))
    assert (turn.text, card) == ("hi", None)


async def test_the_map_tells_the_apps_chain_in_its_order(app: Lancelot) -> None:
    """docs/architecture.md's path of a message names the links of the chain that bot/app.py
    builds, in the same order."""
    chain = message_chain(gate(), app.ledger, app.commands, app.bus, app.files.intake)
    text = MAP.read_text(encoding="utf-8")
    step = text[text.index("2. `core/bus.py` queues it") :]
    step = step[: step.index("\n3. ")]
    places = [step.find(f"the {name}") for name in chain.names]
    assert chain.names[2] == "attachments"  # the app's chain takes files
    assert -1 not in places, dict(zip(chain.names, places, strict=True))
    assert places == sorted(places)
