"""Issue 31, item 6: exactly once across a crash, approvals included. `lancelot run` (a real
process, the real python-telegram-bot, the Docker sandbox's dry runs) against the fake Bot
API, killed with SIGKILL a random few milliseconds after the owner taps Approve; then
restarted. Each `/run rm -rf` is asked once, deletes its folder at most once, and a new
folder made in its place afterwards survives every restart."""

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
from tests.fakes.telegram import FakeTelegram

from .harness import OWNER

ROUNDS = 4
ENV = {"LANCELOT_SANDBOX_WARM_AT_START": "false", "FEATURE_LOCAL_MODEL": "false"}
FINAL = ("executed", "not_run", "interrupted", "denied", "expired")


def approvals(home: Path) -> list[tuple[str, str]]:
    """(command, state) of every approval, read as another process would."""
    db = sqlite3.connect(f"file:{home / 'state.db'}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT action, state FROM approvals").fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []
    finally:
        db.close()
    return [(str(json.loads(a).get("command") or ""), str(s)) for a, s in rows]


def card_for(tg: FakeTelegram, command: str) -> dict[str, Any] | None:
    """The approval card sent for `command`, if it is out."""
    for sent in tg.sent:
        markup = sent.get("reply_markup") or {}
        buttons = [b for row in markup.get("inline_keyboard", []) for b in row]
        if command in sent["plain_text"] and any(b["text"] == "Approve" for b in buttons):
            return {**sent, "buttons": buttons}
    return None


async def settled(home: Path, command: str, timeout: float = 60.0) -> str:
    """Wait until the approval for `command` reaches a final state; that state."""
    states: list[str] = []
    try:
        async with asyncio.timeout(timeout):
            while not (states and all(s in FINAL for s in states)):
                await asyncio.sleep(0.1)
                states = [s for c, s in approvals(home) if command in c]
    except TimeoutError:
        log = (home / "logs" / "lancelot.log").read_text()[-3000:]
        raise AssertionError(f"{command}: approvals {approvals(home)}; log ends:\n{log}") from None
    return states[0]


@pytest.mark.slow
async def test_kill_9_right_after_approve_runs_each_command_once(
    tg: FakeTelegram, tmp_path: Path, docker_image: str
) -> None:
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    home = tmp_path / "home"
    workspace = home / "workspace"
    env = run_env(home, tg, owner=OWNER, **ENV)
    outcomes: list[str] = []
    proc = await lancelot_run(env)
    try:
        for k in range(ROUNDS):
            await tg.wait_for(lambda: tg.is_polling, timeout=60)
            folder = workspace / f"dir{k}"
            folder.mkdir(parents=True)
            (folder / "old.txt").write_text("old")
            hand_over(workspace)
            command = f"rm -rf /workspace/dir{k}"
            tg.user_message(f"/run {command}")
            await tg.wait_for(lambda: card_for(tg, command) is not None, timeout=90)  # noqa: B023
            card = card_for(tg, command)
            assert card is not None
            approve = next(b for b in card["buttons"] if b["text"] == "Approve")
            tg.press_button(card["message_id"], approve["callback_data"])
            await asyncio.sleep(rng.uniform(0.0, 0.06))
            proc.kill()  # SIGKILL, right after the press
            await proc.wait()
            await stop(proc)
            proc = await lancelot_run(env)
            outcomes.append(await settled(home, command))
            # A new folder in the old one's place: a second run of the command would take it.
            folder.mkdir(exist_ok=True)
            (folder / "new.txt").write_text("new")
            hand_over(workspace)
        await tg.wait_for(lambda: tg.is_polling, timeout=60)
        await asyncio.sleep(2.0)  # any replay would have run by now
    finally:
        await stop(proc)

    asked = approvals(home)
    print(f"seed {seed}: outcomes {outcomes}")
    for k in range(ROUNDS):
        command = f"rm -rf /workspace/dir{k}"
        assert [c for c, _ in asked if command in c] == [command], f"seed {seed}: {asked}"
        assert (workspace / f"dir{k}" / "new.txt").read_text() == "new", f"seed {seed}"
    assert all(o in ("executed", "interrupted") for o in outcomes), f"seed {seed}: {outcomes}"
