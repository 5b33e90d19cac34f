"""Webhook mode: updates pushed to Lancelot's web app, guarded by the secret token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp

from core.config import Settings
from tests.fakes.telegram import FakeTelegram

from .harness import free_port, running, settings_for

SECRET = "s3cret-token_for-the-hook"
HEADER = "X-Telegram-Bot-Api-Secret-Token"


def webhook_settings(tg: FakeTelegram, home: Path, **env: str) -> Settings:
    port = free_port()
    return settings_for(
        tg,
        home,
        LANCELOT_WEB_PORT=str(port),
        TELEGRAM_WEBHOOK_URL=f"http://127.0.0.1:{port}/telegram/hook",
        **env,
    )


def an_update(update_id: int = 5) -> dict[str, Any]:
    user = {"id": 1001, "is_bot": False, "first_name": "Owner"}
    message = {
        "message_id": 1,
        "from": user,
        "chat": {"id": 1001, "type": "private"},
        "date": 0,
        "text": "hi",
    }
    return {"update_id": update_id, "message": message}


async def test_webhook_mode_serves_the_owner_without_polling(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    settings = webhook_settings(tg, tmp_path, TELEGRAM_WEBHOOK_SECRET=SECRET)
    async with running(tg, settings):
        [set_webhook] = [c.params for c in tg.calls if c.method == "setWebhook"]
        tg.user_message("/start")
        statuses = await tg.deliver_webhook()
        [greeting] = await tg.wait_for_sent(1)

    assert set_webhook["url"] == settings.telegram.webhook_url
    assert set_webhook["secret_token"] == SECRET
    assert statuses == [200]
    assert greeting["plain_text"].startswith("Hello, I'm Lancelot")
    assert "getUpdates" not in {c.method for c in tg.calls}


async def test_a_wrong_or_missing_secret_is_forbidden(tg: FakeTelegram, tmp_path: Path) -> None:
    async with running(tg, webhook_settings(tg, tmp_path)) as lancelot:  # derived secret
        derived = next(c.params for c in tg.calls if c.method == "setWebhook")["secret_token"]
        wrong = await tg.post_webhook(an_update(1), secret="not-the-secret")
        missing = await tg.post_webhook(an_update(2), secret=None)
        right = await tg.post_webhook(an_update(3))
        await tg.wait_for_sent(1)
        refused = await lancelot.receipts("webhook")

    assert len(derived) == 64
    assert (wrong, missing, right) == (403, 403, 200)
    assert sorted(r.action_name for r in refused) == ["forbidden", "forbidden"]
    assert len(tg.sent) == 1  # only the update with the right secret was answered


async def test_a_malformed_body_is_a_400_without_a_traceback(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    settings = webhook_settings(tg, tmp_path, TELEGRAM_WEBHOOK_SECRET=SECRET)
    url = settings.telegram.webhook_url
    assert url is not None
    async with running(tg, settings) as lancelot:
        results = []
        async with aiohttp.ClientSession() as http:
            for body in (b"{not json", b"[1, 2]", b'{"update_id": "x"}', b"\xff\xfe"):
                async with http.post(url, data=body, headers={HEADER: SECRET}) as response:
                    results.append((response.status, await response.text()))
        refused = await lancelot.receipts("webhook")

    assert [status for status, _ in results] == [400] * 4
    assert all("Traceback" not in text for _, text in results)
    assert [r.action_name for r in refused] == ["malformed"]  # bounded: one per hour per sender


async def test_switching_back_to_polling_deletes_the_webhook(
    tg: FakeTelegram, tmp_path: Path
) -> None:
    async with running(tg, webhook_settings(tg, tmp_path, TELEGRAM_WEBHOOK_SECRET=SECRET)):
        pass
    async with running(tg, settings_for(tg, tmp_path)) as lancelot:
        reply = await lancelot.say("/help")

    methods = [c.method for c in tg.calls]
    assert methods.index("deleteWebhook") > methods.index("setWebhook")
    assert reply["plain_text"].startswith("Commands")
