"""Pairing on Telegram: with a token and no TELEGRAM_OWNER_ID, the first person to send the
code printed where Lancelot runs becomes the owner, kept across restarts; wrong, expired and
too many codes are refused; strangers after pairing reach nothing."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from bot.app import Lancelot, assemble
from bot.channels.registry import CHANNELS
from bot.channels.telegram.setup import attach_telegram, webhook_endpoint
from bot.pairing import OwnerBook
from bot.runner import owner_book
from core.config import Settings, load_settings
from core.events import Card, CardKind
from core.receipts.base import ReceiptQuery
from core.receipts.model import StoredReceipt
from core.security.pairing import PairingLimits
from tests.bot.test_cli import env_for, lancelot
from tests.fakes.telegram import FakeTelegram, SentMessage

from .harness import OWNER, QUICK, STRANGER, TUNING, eventually, free_port, settings_for

CODE = re.compile(r"Pairing code for Telegram: ([A-Z2-9]{4}-[A-Z2-9]{4})")
ASKS = "Send me the code shown where Lancelot runs"


@dataclass
class Pairing:
    """A running Lancelot without a configured owner, and what it printed."""

    tg: FakeTelegram
    console: io.StringIO
    app: Lancelot

    def codes(self) -> list[str]:
        return CODE.findall(self.console.getvalue())

    async def pair(
        self, code: str, *, user_id: int = OWNER, first_name: str = "Ada"
    ) -> tuple[SentMessage, SentMessage]:
        """Send the right code: the greeting, then onboarding's first question."""
        before = len(self.tg.sent)
        self.tg.user_message(code, user_id=user_id, first_name=first_name)
        greeting, question = (await self.tg.wait_for_sent(before + 2))[before : before + 2]
        return greeting, question

    async def say(self, text: str, *, user_id: int = OWNER) -> SentMessage:
        before = len(self.tg.sent)
        self.tg.user_message(text, user_id=user_id, first_name="Ada")
        return (await self.tg.wait_for_sent(before + 1))[before]


def unowned(tg: FakeTelegram, home: Path, **env: str) -> Settings:
    """A token and no owner: what a new user sets first."""
    return settings_for(tg, home, TELEGRAM_OWNER_ID="", **env)


@contextlib.asynccontextmanager
async def pairing(
    tg: FakeTelegram, settings: Settings, limits: PairingLimits | None = None
) -> AsyncIterator[Pairing]:
    """assemble() + attach_telegram() as `lancelot run` does, the console captured."""
    console = io.StringIO()
    hook = webhook_endpoint(settings)
    routes = hook.routes() if hook else ()
    async with assemble(settings, routes=routes, delivery=QUICK) as app:
        owners = owner_book(app, console, limits)
        await attach_telegram(app, webhook=hook, tuning=TUNING, owners=owners)
        yield Pairing(tg, console, app)


async def receipts(running: Pairing, action_type: str) -> list[StoredReceipt]:
    ledger = running.app.ledger
    await ledger.flush()
    return list((await ledger.page(ReceiptQuery(action_type=action_type, limit=200))).receipts)


async def test_the_right_code_makes_the_sender_the_owner_kept_across_a_restart(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    settings = unowned(tg, tmp_path / "home")
    async with pairing(tg, settings) as running:
        [code] = running.codes()
        asked = await running.say("/start")
        greeted, onboarding = await running.pair(code.lower().replace("-", " "))  # as typed
        status = await running.say("/status")

    assert ASKS in asked["plain_text"]
    assert code not in asked["plain_text"]  # the code is shown only where Lancelot runs
    assert greeted["chat_id"] == OWNER
    assert "you are my owner" in greeted["plain_text"]
    assert "Hello Ada" in greeted["plain_text"]
    assert onboarding["chat_id"] == OWNER  # onboarding begins right after the greeting
    assert "Step 1 of 4: your name" in onboarding["plain_text"]
    markup = onboarding["reply_markup"]  # the name Telegram gave, offered as a button
    assert markup is not None
    assert [b["text"] for b in markup["inline_keyboard"][0]] == ["Call me Ada"]
    assert re.search(rf"Owner: Telegram: {OWNER} \(Ada\), paired \d\d:\d\d", status["plain_text"])
    kept = tmp_path / "home" / "owners.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert json.loads(kept.read_text())["owners"]["telegram"]["owner_id"] == str(OWNER)

    async with pairing(tg, settings) as again:
        assert again.codes() == []  # the owner is known: no pairing
        status = await again.say("/status")
        await again.app.drain()
        kinds = [r.action_name for r in await receipts(again, "pairing")]
    assert "Status" in status["plain_text"]
    assert f"{OWNER} (Ada), paired " in status["plain_text"]
    assert sorted(kinds) == ["not_a_code", "paired"]  # the /start before the code; the code


async def test_a_wrong_code_is_refused_and_never_written_down(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    async with pairing(tg, unowned(tg, tmp_path / "home")) as running:
        [code] = running.codes()
        wrong = "ZZZZ-ZZZZ" if code != "ZZZZ-ZZZZ" else "YYYY-YYYY"
        refused = await running.say(wrong, user_id=STRANGER)
        status_by_stranger = await running.say("/status", user_id=STRANGER)
        refusals = await receipts(running, "pairing")

    assert "not the code" in refused["plain_text"]
    assert ASKS in status_by_stranger["plain_text"]  # no command works before pairing
    assert "Owner" not in status_by_stranger["plain_text"]
    assert refusals  # a receipt, without what was typed
    for receipt in refusals:
        shown = json.dumps([receipt.inputs, receipt.outputs])
        assert wrong not in shown
        assert code not in shown
    log = (tmp_path / "home").glob("logs/*.log")
    for path in log:
        assert wrong not in path.read_text()
    assert not (tmp_path / "home" / "owners.json").exists()


async def test_an_expired_code_is_refused_and_a_new_one_is_printed(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    limits = PairingLimits(code_ttl=0.5)
    async with pairing(tg, unowned(tg, tmp_path / "home"), limits) as running:
        [first] = running.codes()
        await eventually(lambda: len(running.codes()) >= 2)
        late = await running.say(first)
        fresh = running.codes()[-1]
        paired, _ = await running.pair(fresh)

    assert "That code has expired" in late["plain_text"]
    assert fresh != first
    assert "within 0.5 seconds" in running.console.getvalue()
    assert "you are my owner" in paired["plain_text"]


async def test_too_many_tries_are_refused_for_a_while_even_with_the_right_code(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    limits = PairingLimits(tries_per_sender=3, sender_window=600)
    async with pairing(tg, unowned(tg, tmp_path / "home"), limits) as running:
        [code] = running.codes()
        for guess in ("AAAA-AAAA", "BBBB-BBBB", "CCCC-CCCC"):
            await running.say(guess, user_id=STRANGER)
        blocked = await running.say(code, user_id=STRANGER)
        other, _ = await running.pair(code)  # another person is not held back by the first

    assert "Too many tries. Try again in 10 minute(s)" in blocked["plain_text"]
    assert blocked["chat_id"] == STRANGER
    assert "you are my owner" in other["plain_text"]
    assert other["chat_id"] == OWNER


async def test_after_pairing_a_stranger_reaches_nothing_and_leaves_one_receipt(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    async with pairing(tg, unowned(tg, tmp_path / "home")) as running:
        [code] = running.codes()
        await running.pair(code)
        sent = len(tg.sent)
        for _ in range(5):
            tg.user_message(code, user_id=STRANGER)
        tg.user_message("/status", user_id=STRANGER)
        answered = await running.say("/help")  # the owner still is, after the stranger's
        strangers = await receipts(running, "stranger")

    assert answered["chat_id"] == OWNER
    assert len(tg.sent) == sent + 1
    assert tg.messages_in(STRANGER) == []
    assert len(strangers) == 1  # bounded: one an hour per sender, with the count
    assert json.loads(strangers[0].inputs)["sender_id"] == str(STRANGER)
    assert code not in strangers[0].inputs + strangers[0].outputs  # never what they typed


async def test_a_configured_owner_wins_and_pairing_never_runs(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    async with pairing(tg, settings_for(tg, tmp_path / "home")) as running:
        tg.user_message("hello", user_id=STRANGER)
        status = await running.say("/status")

    assert running.codes() == []
    assert tg.messages_in(STRANGER) == []
    assert f"Owner: Telegram: {OWNER} (from settings)" in status["plain_text"]


def test_status_names_a_few_configured_owners_and_counts_the_rest(tmp_path: Path) -> None:
    def described(owners: str) -> str:
        settings = load_settings(
            environ={"LANCELOT_HOME": str(tmp_path), "TELEGRAM_OWNER_ID": owners}
        )
        return OwnerBook(settings, tmp_path, channels=list(CHANNELS)).describe()

    assert described("1001,1002") == "Telegram: 1001, 1002 (from settings)"
    many = ",".join(str(1000 + i) for i in range(3000))
    assert described(many) == "Telegram: 1000, 1001, 1002 and 2997 more (from settings)"


async def test_pair_reset_forgets_the_paired_owner_and_pairing_starts_again(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    settings = unowned(tg, home)
    async with pairing(tg, settings) as running:
        [code] = running.codes()
        await running.pair(code)

    shown = await asyncio.to_thread(lancelot, "pair", env=env_for(home))
    assert f"Telegram: {OWNER} (Ada, paired on " in shown.stdout
    reset = await asyncio.to_thread(lancelot, "pair", "--reset", env=env_for(home))
    assert reset.returncode == 0, reset.stderr
    assert f"Forgot the paired Telegram owner {OWNER} (Ada, paired on " in reset.stdout
    assert "restart it: it prints a new code then" in reset.stdout
    again = await asyncio.to_thread(lancelot, "pair", "--reset", env=env_for(home))
    assert again.stdout.startswith("No paired owner to forget.")

    async with pairing(tg, settings) as running:
        [code] = running.codes()
        before = len(tg.sent)
        tg.user_message("/status")  # the owner who was forgotten is a stranger now
        asked = (await tg.wait_for_sent(before + 1))[before]
        greeted = await running.say(code, user_id=STRANGER)  # onboarding began before
    assert ASKS in asked["plain_text"]
    assert greeted["chat_id"] == STRANGER
    assert "you are now my owner" in greeted["plain_text"]


def test_pair_reset_leaves_an_owner_from_the_settings_alone(tmp_path: Path) -> None:
    env = env_for(tmp_path / "home", TELEGRAM_OWNER_ID="1001")
    reset = lancelot("pair", "--reset", env=env)
    assert reset.stdout.splitlines() == [
        "No paired owner to forget.",
        "The Telegram owner set in the settings (TELEGRAM_OWNER_ID=1001) is not touched.",
    ]
    shown = lancelot("pair", env=env)
    assert shown.stdout.splitlines() == [
        "Telegram: 1001 (from the settings, TELEGRAM_OWNER_ID)",
        "Google Chat: no owner yet (`lancelot run` prints a pairing code)",
    ]


async def test_a_paired_owner_gets_the_owners_cards_and_buttons_work_for_them(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    async with pairing(tg, unowned(tg, tmp_path / "home")) as running:
        [code] = running.codes()
        await running.pair(code)
        [ref] = await running.app.bus.broadcast(Card(kind=CardKind.NOTICE, title="For the owner"))
        status = await running.say("/status")
        [button] = status["reply_markup"]["inline_keyboard"][0]  # type: ignore[index]
        tg.press_button(status["message_id"], button["callback_data"])
        await eventually(lambda: len(tg.answered_callbacks) == 1)
        after = await running.say("/status")

    assert ref.chat_id == str(OWNER)  # alerts, approvals and digests go to the paired owner
    assert any("For the owner" in m["plain_text"] for m in tg.messages_in(OWNER))
    assert tg.answered_callbacks[0]["text"] != "Not allowed"
    assert "Crusader: on" in after["plain_text"]


async def test_a_name_with_terminal_escapes_reaches_the_console_without_them(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    async with pairing(tg, unowned(tg, tmp_path / "home")) as running:
        [code] = running.codes()
        greeted, _ = await running.pair(code, first_name="Ada\x1b[2J\x1b]0;owned\x07")

    assert "Paired: Ada[2J]0;owned is now the owner on Telegram." in running.console.getvalue()
    assert "\x1b" not in running.console.getvalue()
    assert "Hello Ada[2J]0;owned," in greeted["plain_text"]


async def test_pairing_works_in_webhook_mode_too(tg: FakeTelegram, tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/telegram/hook"
    settings = unowned(tg, tmp_path / "home", LANCELOT_WEB_PORT=str(port), TELEGRAM_WEBHOOK_URL=url)
    async with pairing(tg, settings) as running:
        [code] = running.codes()
        tg.user_message(code, first_name="Ada")
        assert await tg.deliver_webhook() == [200]
        greeting, _ = await tg.wait_for_sent(2)
        tg.user_message("/help")
        assert await tg.deliver_webhook() == [200]
        answer = (await tg.wait_for_sent(3))[2]

    assert "getUpdates" not in {c.method for c in tg.calls}
    assert "you are now my owner on Telegram" in greeting["plain_text"]
    assert answer["chat_id"] == OWNER
    assert "/status" in answer["plain_text"]
