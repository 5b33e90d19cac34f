"""No effect without a durable receipt: an intent is on disk before a change runs, and an
intent a stop left without an outcome is reported as interrupted after the restart."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from bot.app import Lancelot, assemble
from core.config import Settings, load_settings
from core.governance.kinds import GovernanceReceipt
from core.receipts.base import ReceiptQuery
from core.receipts.model import Receipt, ReceiptStatus, StoredReceipt, new_receipt_id
from core.tools.action import ToolAction
from core.tools.file_ops import file_action
from core.tools.workspace import Workspace

REPO = Path(__file__).resolve().parents[3]
WRITES_PER_ROUND = 10
ROUNDS = 5


def settings_for(home: Path) -> Settings:
    return load_settings(environ={"LANCELOT_HOME": str(home), "FEATURE_LOCAL_MODEL": "false"})


def write(app: Lancelot, i: int) -> ToolAction:
    """A new file in the workspace: T1, it runs at once (the agent's write_file does this)."""
    params = {"path": f"f{i}.txt", "content": f"file {i}\n" * 64}
    return file_action(Workspace(app.home / "workspace"), "file.write", params)


async def drive(home: Path, first: int) -> None:
    """The process that is killed: writes files one after another through governance."""
    async with assemble(settings_for(home), web=False) as app:
        assert app.governance is not None
        print("ready", flush=True)
        for i in range(first, first + WRITES_PER_ROUND):
            await app.governance.gateway.run(
                write(app, i), via="test", parent_id=f"step{i}", quest_id=None
            )
        print("done", flush=True)


async def receipts(app: Lancelot, kind: str) -> list[StoredReceipt]:
    await app.ledger.flush()
    page = await app.ledger.page(ReceiptQuery(action_type=kind, limit=1000))
    return list(page.receipts)


async def test_an_intent_is_on_disk_before_the_change_and_the_outcome_names_it(
    app: Lancelot,
) -> None:
    assert app.governance is not None
    await app.governance.gateway.run(write(app, 1), via="test", parent_id="step", quest_id=None)
    (intent,) = await receipts(app, GovernanceReceipt.TOOL_INTENT)
    (run,) = await receipts(app, GovernanceReceipt.TOOL_RUN)
    assert intent.seq < run.seq
    assert intent.status == ReceiptStatus.PENDING
    assert intent.decoded("outputs") == {"outcome_id": run.id}
    assert intent.decoded("inputs")["params"]["path"] == "f1.txt"
    assert json.loads(intent.metadata)["tier"] == "T1"
    read = file_action(Workspace(app.home / "workspace"), "file.read", {"path": "f1.txt"})
    await app.governance.gateway.run(read, via="test", parent_id="step", quest_id=None)
    assert len(await receipts(app, GovernanceReceipt.TOOL_INTENT)) == 1  # reads need none


async def test_an_intent_without_an_outcome_is_reported_interrupted_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with assemble(settings_for(home), web=False) as app:
        # What a stop between the intent and the run's outcome leaves behind.
        await app.ledger.append_durable(
            Receipt(
                GovernanceReceipt.TOOL_INTENT,
                "file.write",
                inputs={"command": "write f9.txt"},
                outputs={"outcome_id": new_receipt_id()},
                status=ReceiptStatus.PENDING,
            )
        )
    for _ in range(2):  # reported after the first restart, not again after the second
        async with assemble(settings_for(home), web=False) as app:
            (interrupted,) = await receipts(app, GovernanceReceipt.TOOL_INTERRUPTED)
    assert interrupted.status == ReceiptStatus.FAILURE
    assert interrupted.error_message is not None
    assert interrupted.error_message.startswith("interrupted")
    assert interrupted.decoded("inputs") == {"command": "write f9.txt"}


def test_kill_9_at_random_points_never_leaves_an_effect_without_an_intent(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    rng = random.Random(int(os.environ.get("LANCELOT_TEST_SEED", time.time())))
    env = {**os.environ, "LANCELOT_HOME": str(home)}
    for round_ in range(ROUNDS):
        driver = subprocess.Popen(
            [sys.executable, __file__, str(home), str(round_ * WRITES_PER_ROUND)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=REPO,
        )
        assert driver.stdout is not None
        assert driver.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.4))
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
        driver.stdout.close()
    asyncio.run(check_every_effect(home))


async def check_every_effect(home: Path) -> None:
    async with assemble(settings_for(home), web=False) as app:
        intents = await receipts(app, GovernanceReceipt.TOOL_INTENT)
        runs = {r.id for r in await receipts(app, GovernanceReceipt.TOOL_RUN)}
        interrupted = {r.parent_id for r in await receipts(app, GovernanceReceipt.TOOL_INTERRUPTED)}
    intended = {i.decoded("inputs")["params"]["path"] for i in intents}
    written = {p.name for p in (home / "workspace").glob("f*.txt")}
    assert written <= intended  # no effect without an intent
    for intent in intents:  # and each intent ended, or was reported
        assert intent.decoded("outputs")["outcome_id"] in runs or intent.id in interrupted


if __name__ == "__main__":
    asyncio.run(drive(Path(sys.argv[1]), int(sys.argv[2])))
