"""An approval the agent waits on is made once per (update, step), whatever restarts happen.
`lancelot run` (a real process, the real python-telegram-bot, the Docker sandbox's dry runs,
a fake OpenAI model) is killed with SIGKILL a random few milliseconds after the agent's card
went out and was marked delivered; the inbox redoes the owner's message at the next start,
and the agent reaches the same step again. It waits on the first approval: no second card,
and one run when approved."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.core.tools.effects.support import hand_over
from tests.fakes.lancelot_process import lancelot_run, run_env, stop
from tests.fakes.llm import FakeOpenAI
from tests.fakes.llm.base import Reply
from tests.fakes.telegram import FakeTelegram

from .harness import OWNER
from .test_crash_approvals import ENV, approvals, settled

ROUNDS = 3
FINAL = {"response_to_user": "Done.", "actions_taken": [], "next_action": ""}


def deleter(body: dict[str, Any]) -> Reply:
    """A model that deletes the folder the owner names ("please delete dirN"), then answers."""
    schema = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
    wanted = set(schema.get("properties", {}))
    if "intent" in wanted:
        return Reply(json={"intent": "EXEC_REQUEST"})  # straight into the tool loop
    if "passed" in wanted:
        return Reply(json={"passed": True, "reason": "done"})
    messages = body["messages"]
    if "response_to_user" in wanted or not body.get("tools"):
        return Reply(json=FINAL)
    if any(m["role"] == "tool" for m in messages):
        return Reply(text=json.dumps(FINAL))
    asked = next(str(m["content"]) for m in reversed(messages) if m["role"] == "user")
    folder = asked.rsplit(" ", 1)[-1]
    return Reply(tool_calls=(("run_command", {"command": f"rm -rf /workspace/{folder}"}),))


def undelivered(home: Path) -> int:
    """Cards in the outbox not yet marked delivered, read as another process would."""
    db = sqlite3.connect(f"file:{home / 'state.db'}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT COUNT(*) FROM outbox WHERE state = 'pending'").fetchone()[0])
    finally:
        db.close()


def cards(tg: FakeTelegram, folder: str) -> list[dict[str, Any]]:
    """Every approval card sent for deleting `folder` (a message with an Approve button)."""
    found = []
    for sent in tg.sent:
        markup = sent.get("reply_markup") or {}
        buttons = [b for row in markup.get("inline_keyboard", []) for b in row]
        if f"{folder}" in sent["plain_text"] and any(b["text"] == "Approve" for b in buttons):
            found.append({**sent, "buttons": buttons})
    return found


@pytest.mark.slow
async def test_kill_9_after_the_agents_card_asks_once_per_step(
    tg: FakeTelegram, tmp_path: Path, docker_image: str
) -> None:
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    home = tmp_path / "home"
    workspace = home / "workspace"
    async with FakeOpenAI() as model:
        model.responder = deleter
        env = run_env(
            home,
            tg,
            owner=OWNER,
            LANCELOT_PROVIDER="openai",
            OPENAI_API_KEY="test-key-not-real",
            OPENAI_BASE_URL=model.base_url,
            LANCELOT_LLM_RETRY_BASE_SECONDS="0",
            **ENV,
        )
        proc = await lancelot_run(env)
        try:
            for k in range(ROUNDS):
                await tg.wait_for(lambda: tg.is_polling, timeout=60)
                folder = workspace / f"dir{k}"
                folder.mkdir(parents=True)
                (folder / "old.txt").write_text("old")
                hand_over(workspace)
                tg.user_message(f"please delete dir{k}")
                await tg.wait_for(lambda: bool(cards(tg, f"dir{k}")), timeout=90)  # noqa: B023
                # Not the one window no platform lets us close (a kill after Telegram took
                # the card, before its delivered mark): that would send the card again.
                await tg.wait_for(lambda: undelivered(home) == 0, timeout=30)
                await asyncio.sleep(rng.uniform(0.0, 0.06))
                proc.kill()  # SIGKILL, the agent waiting on the owner
                await proc.wait()
                await stop(proc)
                asked = len(model.requests)
                proc = await lancelot_run(env)
                # The inbox redoes the message: the agent reaches the same step again.
                await tg.wait_for(lambda: len(model.requests) > asked, timeout=90)  # noqa: B023
                await asyncio.sleep(1.0)  # a second card would be out by now
                assert len(cards(tg, f"dir{k}")) == 1, f"seed {seed}: {approvals(home)}"
                card = cards(tg, f"dir{k}")[0]
                approve = next(b for b in card["buttons"] if b["text"] == "Approve")
                tg.press_button(card["message_id"], approve["callback_data"])
                assert await settled(home, f"dir{k}") == "executed", f"seed {seed}"
                # A new folder in the old one's place: a second run of the step would take it.
                folder.mkdir(exist_ok=True)
                (folder / "new.txt").write_text("new")
                hand_over(workspace)
            await asyncio.sleep(2.0)  # any replay would have run by now
        finally:
            await stop(proc)

    asked_for = approvals(home)
    print(f"seed {seed}: approvals {asked_for}")
    for k in range(ROUNDS):
        assert len([c for c, _ in asked_for if f"dir{k}" in c]) == 1, f"seed {seed}: {asked_for}"
        assert (workspace / f"dir{k}" / "new.txt").read_text() == "new", f"seed {seed}"
