"""Issue 20, item 4: nothing lost, nothing twice, across a crash (and no long wait after an
outage). `lancelot run` (a real
process, the real python-telegram-bot) against the fake Bot API, killed with SIGKILL at
random moments while the owner sends bursts of messages; after the restarts every message
has exactly one reply. A second copy may only come from a kill that fell between Telegram
accepting a reply and Lancelot storing that it did (Telegram has no idempotency key)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from core.delivery.inbox import MAX_ATTEMPTS, InboxState, UpdateInbox
from core.delivery.writer import Write
from core.errors import DeliveryDeferred
from core.events import Card, CardKind
from tests.fakes.lancelot_process import lancelot_run, run_env, stop
from tests.fakes.telegram import FakeTelegram

from .harness import OWNER, QUICK, Running, running, settings_for
from .test_webhook import an_update, webhook_settings

KILLS = 3
BURST = 20  # owner messages per round, sent over about half a second
REPLY = re.compile(r"/m(\d+)\b")
# A duplicate's first copy was accepted at most this long before the kill that cut it short:
# the delivered mark follows Telegram's answer by one state.db write.
WINDOW = 2.0
ENV = {
    "LANCELOT_LIMITS_RATE_PER_MINUTE": "100000",  # the burst is the test, not the rate limit
    "LANCELOT_SANDBOX_WARM_AT_START": "false",
    "FEATURE_LOCAL_MODEL": "false",
}


def replies(tg: FakeTelegram) -> Counter[int]:
    """How many replies each /mN got (the reply to an unknown command names it)."""
    return Counter(int(m.group(1)) for s in tg.sent if (m := REPLY.search(s["plain_text"])))


def accepted_at(tg: FakeTelegram, n: int) -> list[float]:
    """When Telegram accepted each reply naming /mN."""
    return [
        c.at
        for c in tg.calls
        if c.method == "sendMessage"
        and c.status == 200
        and (m := REPLY.search(str(c.params.get("text", ""))))
        and int(m.group(1)) == n
    ]


def window(accepted: float, kills: list[float], starts: list[float]) -> float:
    """How long after Telegram accepted a reply the next kill came. The fake answers in the
    test's event loop, so a request the killed process wrote just before its kill is answered
    after it: a copy accepted between a kill and the next start came from the dead process,
    in flight at the kill (0). Anything later came from a living process: inf, never allowed."""
    for kill, start in zip(kills, starts[1:], strict=False):
        if kill <= accepted < start:
            return 0.0
    return min((k - accepted for k in kills if k > accepted), default=float("inf"))


async def burst(tg: FakeTelegram, first: int) -> None:
    for n in range(first, first + BURST):
        tg.user_message(f"/m{n}")
        await asyncio.sleep(0.025)


@pytest.mark.slow
async def test_kill_9_during_bursts_loses_no_message_and_doubles_only_in_the_window(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    home, sent, kills, starts = tmp_path / "home", 0, [], []
    for round_ in range(KILLS + 1):
        starts.append(time.monotonic())
        proc = await lancelot_run(run_env(home, tg, owner=OWNER, **ENV))
        try:
            await tg.wait_for(lambda: tg.is_polling, timeout=60)
            # What came before the kill is answered now: kept updates and queued replies.
            before = set(range(sent))
            await tg.wait_for(lambda: set(replies(tg)) >= before, timeout=30)  # noqa: B023
            if round_ == KILLS:
                break
            sending = asyncio.create_task(burst(tg, sent))
            sent += BURST
            await asyncio.sleep(rng.uniform(0.05, 0.9))
            proc.kill()  # SIGKILL: nothing of Lancelot runs after it
            kills.append(time.monotonic())
            await proc.wait()
            await sending
        finally:
            await stop(proc)

    counts = replies(tg)
    lost = sorted(set(range(sent)) - set(counts))
    doubled = {n: c for n, c in counts.items() if c > 1}
    windows = [window(accepted_at(tg, n)[0], kills, starts) for n in doubled]
    log = (home / "logs" / "lancelot.log").read_text()
    handed_on_again = sum(int(n) for n in re.findall(r"handling (\d+) update\(s\) kept", log))
    print(
        f"seed {seed}: {sent} messages, {KILLS} kills, {handed_on_again} kept update(s) handed "
        f"on again, lost {len(lost)}, sent twice {len(doubled)} (the kill came "
        f"{[round(w, 3) for w in windows]} s after Telegram accepted the first copy); copies "
        f"accepted at {[[round(a - starts[0], 3) for a in accepted_at(tg, n)] for n in doubled]}"
        f" s, kills at {[round(k - starts[0], 3) for k in kills]} s, starts at "
        f"{[round(s - starts[0], 3) for s in starts]} s"
    )
    assert lost == [], f"seed {seed}"
    assert all(c == 2 for c in doubled.values()), f"seed {seed}: {doubled}"
    assert all(w <= WINDOW for w in windows), f"seed {seed}: {windows}"
    assert set(counts) == set(range(sent))


def _leave_open(home: Path, attempts: int = 1) -> None:
    """What a kill -9 leaves when it comes before an update's done mark (run with
    `_no_done_marks`, so each update is still there as it came)."""
    db = sqlite3.connect(home / "state.db", isolation_level=None)
    try:
        db.execute("UPDATE inbox SET state = 'open', attempts = ?", (attempts,))
    finally:
        db.close()


@contextlib.contextmanager
def _no_done_marks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Handled updates are not marked done (as if each time a kill came first)."""

    def not_marked(self: UpdateInbox, channel: str, update_id: int) -> Write:
        return lambda conn: None  # every mark, on its own or with an answer, writes nothing

    with monkeypatch.context() as patch:
        patch.setattr(UpdateInbox, "done_mark", not_marked)
        yield


async def test_an_update_handled_again_gets_the_reply_already_sent_not_a_second(
    tg: FakeTelegram, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(tg, tmp_path)
    with _no_done_marks(monkeypatch):
        async with running(tg, settings) as lancelot:
            await lancelot.say("/m1")
            [update_id] = [u[0] for u in await kept(lancelot)]
    _leave_open(settings.home)

    async with running(tg, settings) as lancelot:
        inbox = lancelot.app.inbox
        async with asyncio.timeout(10):
            while await inbox.state_of("telegram", update_id) != (InboxState.DONE, 2):  # noqa: ASYNC110
                await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)  # a second reply would be out by now
        handled = await lancelot.receipts("inbound")

    assert [s["plain_text"].count("/m1") for s in tg.sent] == [1]
    assert len(handled) == 2  # handled twice, answered once


async def test_an_update_that_keeps_killing_lancelot_is_set_aside_and_the_owner_told(
    tg: FakeTelegram, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(tg, tmp_path)
    with _no_done_marks(monkeypatch):
        async with running(tg, settings) as lancelot:
            await lancelot.say("/m1")
            [update_id] = [u[0] for u in await kept(lancelot)]
    _leave_open(settings.home, attempts=MAX_ATTEMPTS)

    async with running(tg, settings) as lancelot:
        [notice] = (await tg.wait_for_sent(2))[1:]
        [receipt] = await lancelot.receipts("update_abandoned")
        state = await lancelot.app.inbox.state_of("telegram", update_id)

    assert notice["plain_text"].startswith("Messages set aside")
    assert "update_abandoned" in notice["plain_text"]
    assert json.loads(receipt.inputs)["update_id"] == update_id
    assert state == (InboxState.ABANDONED, MAX_ATTEMPTS)
    assert [s["plain_text"].count("/m1") for s in tg.sent[:1]] == [1]  # not handled again


async def kept(lancelot: Running) -> list[tuple[int, str]]:
    """(update id, state) of every update in the inbox."""
    async with lancelot.app.state.execute("SELECT update_id, state FROM inbox") as cur:
        return [(int(u), str(s)) for u, s in await cur.fetchall()]


async def test_a_webhook_update_is_kept_before_telegram_gets_its_200(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    settings = webhook_settings(tg, tmp_path)
    async with running(tg, settings) as lancelot:
        tg.set_delay("sendMessage", 1.0)  # the reply is still on its way when the 200 comes
        status = await tg.post_webhook(an_update(77))
        state = await lancelot.app.inbox.state_of("telegram", 77)
        again = await tg.post_webhook(an_update(77))  # Telegram retries: not handled twice
        tg.set_delay("sendMessage", 0)
        await tg.wait_for_sent(1)
        await asyncio.sleep(0.2)

    assert (status, again) == (200, 200)
    assert state == (InboxState.OPEN, 1)
    assert len(tg.sent) == 1


async def test_after_an_outage_the_backlog_goes_as_soon_as_polling_works_again(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    # The outbox's own backoff would wait half a minute or more after the outage.
    slow_retries = replace(QUICK, backoff_base=30.0, backoff_cap=60.0, first_attempt_wait=0.5)
    settings = settings_for(tg, tmp_path)
    async with running(tg, settings, policy=slow_retries) as lancelot:
        tg.go_down()
        for title in ("Digest", "Alert"):
            with pytest.raises(DeliveryDeferred):
                await lancelot.app.bus.send("telegram", str(OWNER), Card(CardKind.NOTICE, title))
        await tg.wait_for(lambda: sum(c.status == 502 for c in tg.calls) >= 4)
        tg.come_back()
        back = time.monotonic()
        sent = await tg.wait_for_sent(2, timeout=5)
        late = time.monotonic() - back

    assert sorted(m["plain_text"] for m in sent) == ["Alert", "Digest"]
    assert late < 5


async def test_an_update_whose_handling_fails_stays_open_and_the_next_is_answered(
    tg: FakeTelegram,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with running(tg, settings_for(tg, tmp_path)) as lancelot:
        publish = lancelot.app.bus.publish
        failures = [RuntimeError("a bug on the way to the core")]

        async def breaks_once(event: object) -> None:
            if failures:
                raise failures.pop()
            await publish(event)  # type: ignore[arg-type]

        monkeypatch.setattr(lancelot.app.bus, "publish", breaks_once)
        tg.user_message("/m1")
        answered = await lancelot.say("/m2")  # polling goes on past the failure
        async with asyncio.timeout(5):
            while len({state for _, state in await kept(lancelot)}) < 2:  # noqa: ASYNC110
                await asyncio.sleep(0.01)  # /m2's done mark follows its reply
        [(_, state), (_, done)] = sorted(await kept(lancelot))

    assert "/m2" in answered["plain_text"]
    assert [s["plain_text"].count("/m1") for s in tg.sent] == [0]  # never answered
    assert (state, done) == (InboxState.OPEN, InboxState.DONE)  # a restart hands /m1 on again
    assert "telegram: handling an update failed" in caplog.text
    assert "a bug on the way to the core" in caplog.text


async def test_an_update_is_marked_handled_once_its_reply_is_queued_not_delivered(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    settings = webhook_settings(tg, tmp_path)
    async with running(tg, settings) as lancelot:
        tg.set_delay("sendMessage", 8.0)  # an outage: the first attempt hangs
        started = time.monotonic()
        await tg.post_webhook(an_update(78))
        while await lancelot.app.inbox.state_of("telegram", 78) != (InboxState.DONE, 1):
            assert time.monotonic() - started < 3.0, "the mark waited for the delivery"
            await asyncio.sleep(0.02)
        marked = time.monotonic() - started  # Telegram has not answered the reply yet
        tg.set_delay("sendMessage", 0)
        await tg.wait_for_sent(1, timeout=15)

    assert marked < 3.0
    assert len(tg.sent) == 1
