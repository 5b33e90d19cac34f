"""Button presses for the crash soak: `/run rm -rf` commands whose approval cards the owner
answers with Approve or Deny, some of them a few milliseconds before a kill -9.

Each command deletes a folder of its own. When its approval has settled, a new folder is made
in the old one's place: a command run a second time would take it, so what is on disk at the
end shows every command run twice, whatever the ledger says.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import sqlite3
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.core.tools.effects.support import hand_over
from tests.fakes.telegram import FakeTelegram

FINAL = ("executed", "not_run", "interrupted", "denied", "expired")
KILL_WINDOW = 0.06  # a kill after a press comes within this many seconds of it
# The fake answers in this process: a kill may land while a send is in flight, and the fake
# notes its answer (Telegram accepted it) a moment after the kill. Such a kill came first.
IN_FLIGHT = 1.0
SETTLE_SECONDS = 300.0  # an approval not final this long after its press counts as lost


def approvals(home: Path) -> list[tuple[str, str]]:
    """(command, state) of every approval, read as another process would."""
    try:
        db = sqlite3.connect(f"file:{home / 'state.db'}?mode=ro", uri=True)
    except sqlite3.OperationalError:  # not created yet
        return []
    try:
        rows = db.execute("SELECT action, state FROM approvals").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        db.close()
    return [(str(json.loads(a).get("command") or ""), str(s)) for a, s in rows]


def kill_after(first: float, kills: list[float]) -> float:
    """Seconds from Telegram accepting a message's first copy to the first kill after it (or
    during its send, negative); nan if no kill came."""
    return min((k - first for k in kills if k > first - IN_FLIGHT), default=float("nan"))


def in_window(delay: float, widest: float) -> bool:
    """Whether a copy sent again after a kill `delay` seconds after the first was accepted is
    the duplicate no platform lets us rule out (accepted, not yet marked delivered)."""
    return -IN_FLIGHT <= delay <= widest


def names(command: str, text: str) -> bool:
    """Whether `text` names `command` (rm -rf /workspace/d1, not .../d10)."""
    return re.search(re.escape(command) + r"(?![\w])", text) is not None


def cards_for(tg: FakeTelegram, command: str) -> list[dict[str, Any]]:
    """Every approval card sent for `command` (a message with an Approve button)."""
    found = []
    for sent in tg.sent:
        markup = sent.get("reply_markup") or {}
        buttons = [b for row in markup.get("inline_keyboard", []) for b in row]
        if names(command, sent["plain_text"]) and any(b["text"] == "Approve" for b in buttons):
            found.append({**sent, "buttons": buttons})
    return found


@dataclass
class Presses:
    """The `/run` commands of one soak and what the owner pressed on each card."""

    tg: FakeTelegram
    home: Path
    rng: random.Random
    kill: Callable[[], Awaitable[None]]  # kill -9 Lancelot and start it again
    kill_share: float  # how many presses a kill follows
    pressed: dict[str, str] = field(default_factory=dict)  # command -> Approve or Deny
    unanswered: list[str] = field(default_factory=list)  # commands whose card never came
    press_kills: int = 0
    unsettled: int = 0  # approvals still not final at the end
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def workspace(self) -> Path:
        """The folder the commands delete in."""
        return self.home / "workspace"

    def ask(self, n: int) -> None:
        """Make folder dN and ask Lancelot to delete it; the card is answered in the
        background."""
        folder = self.workspace / f"d{n}"
        folder.mkdir(parents=True)
        (folder / "old.txt").write_text("old")
        hand_over(self.workspace)
        command = f"rm -rf /workspace/d{n}"
        self.tg.user_message(f"/run {command}")
        self._tasks.append(asyncio.create_task(self._answer(command, folder)))

    async def _answer(self, command: str, folder: Path) -> None:
        try:
            await self.tg.wait_for(lambda: bool(cards_for(self.tg, command)), timeout=240)
        except TimeoutError:
            self.unanswered.append(command)
            return
        card = cards_for(self.tg, command)[0]
        label = "Approve" if self.rng.random() < 0.7 else "Deny"
        button = next(b for b in card["buttons"] if b["text"] == label)
        self.pressed[command] = label
        self.tg.press_button(card["message_id"], button["callback_data"])
        if self.rng.random() < self.kill_share:
            await asyncio.sleep(self.rng.uniform(0.0, KILL_WINDOW))
            self.press_kills += 1
            await self.kill()
        await self._settled(command)
        if label == "Approve":  # a second run of the command would take this one
            await asyncio.to_thread(self._replace, folder)

    def _replace(self, folder: Path) -> None:
        """A new folder where the approved command deleted one."""
        folder.mkdir(exist_ok=True)
        (folder / "new.txt").write_text("new")
        hand_over(self.workspace)

    async def _settled(self, command: str) -> None:
        """Until the approval for `command` is final (or SETTLE_SECONDS passed)."""
        async with asyncio.timeout(SETTLE_SECONDS):
            while True:
                states = [s for c, s in approvals(self.home) if c == command]
                if states and all(s in FINAL for s in states):
                    return
                await asyncio.sleep(0.2)

    async def finish(self) -> None:
        """Wait for every card to be answered and its approval to settle."""
        results = await asyncio.gather(*self._tasks, return_exceptions=True)
        self.unsettled = sum(isinstance(r, BaseException) for r in results)

    def audit(self, kills: list[float], window: float) -> dict[str, object]:
        """Lost, run twice, asked twice: from the approvals, the cards and the disk. A card
        sent again after a kill came within `window` seconds of Telegram accepting its first
        copy is the one duplicate no platform lets us rule out (accepted, not yet marked)."""
        asked = Counter(c for c, _ in approvals(self.home))
        states = Counter(s for _, s in approvals(self.home))
        commands = [*self.pressed, *self.unanswered]
        twice_on_disk = [c for c, label in self.pressed.items() if not self._survived(c, label)]
        return {
            "commands": len(commands),
            "approved": sum(v == "Approve" for v in self.pressed.values()),
            "denied": sum(v == "Deny" for v in self.pressed.values()),
            "kills right after a press": self.press_kills,
            "approval states": dict(states),
            "lost (no card, or never settled)": len(self.unanswered) + self.unsettled,
            "duplicate approvals": sum(n > 1 for n in asked.values()),
            "cards sent twice": [self._resent(c, kills) for c in commands if self._twice(c)],
            "cards sent twice outside the window": sum(
                not in_window(self._resent(c, kills), window) for c in commands if self._twice(c)
            ),
            "run twice (a later folder gone) or a denied one run": twice_on_disk,
        }

    def _twice(self, command: str) -> bool:
        return len(cards_for(self.tg, command)) > 1

    def _resent(self, command: str, kills: list[float]) -> float:
        """How long after Telegram accepted the first card for `command` the next kill came
        (seconds; nan if none did)."""
        first = min(
            call.at
            for call in self.tg.calls
            if call.method == "sendMessage"
            and call.status == 200
            and names(command, str(call.params.get("text", "")))
        )
        return kill_after(first, kills)

    def _survived(self, command: str, label: str) -> bool:
        """Whether the folder a single run leaves is there: the new one after an approved
        run, the old one after a denied run."""
        folder = self.workspace / command.rsplit("/", 1)[1]
        return (folder / ("new.txt" if label == "Approve" else "old.txt")).exists()
