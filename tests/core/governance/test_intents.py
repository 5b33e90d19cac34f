"""No effect without a durable receipt: an intent is on disk before a change runs, and an
intent a stop left without an outcome is reported as interrupted after the restart."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.app import Lancelot, assemble
from core.config import Settings, load_settings
from core.governance.intents import report_interrupted
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.receipts.model import Receipt, ReceiptStatus, StoredReceipt, new_receipt_id
from core.receipts.registry import GovernanceReceipt
from core.tools.action import ToolAction
from core.tools.file_ops import file_action
from core.tools.sandbox import DockerEngine
from core.tools.sandbox.limits import OWNER_LABEL, owner_tag
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


async def check_every_effect(
    home: Path,
    made_by: Callable[[StoredReceipt], str] = lambda i: i.decoded("inputs")["params"]["path"],
    pattern: str = "f*.txt",
    note: str = "",
) -> None:
    """After a restart: every file matching `pattern` has an intent (`made_by` names the file
    an intent makes), and every intent has its outcome or one interrupted report."""
    async with assemble(settings_for(home), web=False) as app:
        intents = await receipts(app, GovernanceReceipt.TOOL_INTENT)
        runs = {r.id for r in await receipts(app, GovernanceReceipt.TOOL_RUN)}
        reports = [r.parent_id for r in await receipts(app, GovernanceReceipt.TOOL_INTERRUPTED)]
    intended = {made_by(i) for i in intents}
    written = {p.name for p in (home / "workspace").glob(pattern)}
    assert written <= intended, note  # no effect without an intent
    assert len(reports) == len(set(reports)), note  # each reported once
    for intent in intents:  # and each intent ended, or was reported
        ended = intent.decoded("outputs")["outcome_id"] in runs
        assert ended or intent.id in reports, f"{note}: {intent.decoded('inputs')['command']}"


def test_kill_9_during_run_commands_never_leaves_a_file_without_an_intent(
    tmp_path: Path, docker_image: str
) -> None:
    """The issue's test: `lancelot chat` (the console channel) as a real process gets ten
    `/run touch fN` at a time through the real Docker sandbox and is killed at a random
    moment, five times; after the restarts each file has its intent, each intent its outcome
    or one interrupted report, and the sandbox works and leaves nothing on the engine."""
    home = tmp_path / "home"
    seed = int(os.environ.get("LANCELOT_TEST_SEED", time.time()))
    rng = random.Random(seed)
    env = {**os.environ, "LANCELOT_HOME": str(home), "LANCELOT_SANDBOX_IMAGE": docker_image}
    for round_ in range(ROUNDS):
        first = round_ * WRITES_PER_ROUND
        commands = [f"/run touch f{n}" for n in range(first, first + WRITES_PER_ROUND)]
        chat = lancelot_chat(env)
        try:
            assert chat.stdout is not None
            assert chat.stdin is not None
            assert chat.stdout.readline().startswith("Lancelot console")  # assembled
            chat.stdin.write("".join(f"{c}\n" for c in commands))
            chat.stdin.flush()
            # Ten commands take about 3.5 s here: the kill lands anywhere in them, or after.
            time.sleep(rng.uniform(0.0, 4.0))
        finally:
            chat.kill()  # SIGKILL
            chat.wait(timeout=30)
            close_pipes(chat)
    last = lancelot_chat(env)  # reports the last round's interrupted intents, sweeps, runs
    out, _ = last.communicate("/run touch done\n", timeout=60)
    assert last.returncode == 0
    assert "Changed: it creates 1 file: done." in out
    note = f"LANCELOT_TEST_SEED={seed}"
    asyncio.run(check_every_effect(home, _touched, "f[0-9]*", note))
    assert _left_on_engine(home / "workspace") == [], note


def lancelot_chat(env: dict[str, str]) -> subprocess.Popen[str]:
    """`lancelot chat` on its own port, reading commands from a pipe."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**env, "LANCELOT_WEB_PORT": str(port)},
        cwd=REPO,
    )


def close_pipes(process: subprocess.Popen[str]) -> None:
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):  # stdin of a killed process: broken pipe
                pipe.close()


def _touched(intent: StoredReceipt) -> str:
    """The file a `touch fN` intent makes (its command, as the owner typed it)."""
    return str(intent.decoded("inputs")["command"]).removeprefix("touch ")


def _left_on_engine(workspace: Path) -> list[str]:
    """Containers and volumes (sandbox or dry run) a Lancelot on this workspace left behind."""
    mine = {"label": f"{OWNER_LABEL}={owner_tag(workspace)}"}
    engine = DockerEngine()
    try:
        containers = engine.api.containers(all=True, filters=mine)
        volumes = (engine.api.volumes(filters=mine) or {}).get("Volumes") or []
    finally:
        engine.close()
    return [c["Id"][:12] for c in containers] + [v["Name"] for v in volumes]


if __name__ == "__main__":
    asyncio.run(drive(Path(sys.argv[1]), int(sys.argv[2])))


def intent(outcome_id: str) -> Receipt:
    """What the executor commits before an action that may change anything runs."""
    return Receipt(
        GovernanceReceipt.TOOL_INTENT,
        "shell.exec",
        inputs={"command": f"touch {outcome_id[:6]}"},
        outputs={"outcome_id": outcome_id},
        status=ReceiptStatus.PENDING,
    )


def outcome(outcome_id: str) -> Receipt:
    return Receipt(GovernanceReceipt.TOOL_RUN, "shell.exec", id=outcome_id)


async def test_every_intent_without_an_outcome_is_found_however_far_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """More intents than one page holds: the lost ones are found on every page, oldest
    first, and the next start looks only at what came after. (The writer commits only when
    told to: what was reported is committed when the check returns.)"""
    async with SqliteLedger(tmp_path / "ledger.db", flush_interval=60) as ledger:
        lost: list[str] = []
        for i in range(1_100):
            outcome_id = new_receipt_id()
            ledger.append(intent(outcome_id))
            if i in (3, 550, 1_099):
                lost.append(outcome_id)
            else:
                ledger.append(outcome(outcome_id))
        with caplog.at_level(logging.WARNING, logger="core.governance.intents"):
            found = await report_interrupted(ledger)
        assert [r.decoded("outputs")["outcome_id"] for r in found] == lost
        warned = [r.getMessage() for r in caplog.records if r.name == "core.governance.intents"]
        assert warned == ["action interrupted by a stop: shell.exec"] * 3
        query = ReceiptQuery(action_type=GovernanceReceipt.TOOL_INTERRUPTED)
        reported = (await ledger.page(query)).receipts  # newest first
        assert [r.parent_id for r in reported] == [r.id for r in reversed(found)]
        assert [r.decoded("metadata") for r in reported] == [
            {"intent_seq": r.seq} for r in reversed(found)
        ]
        newest = await ledger.page(ReceiptQuery(action_type=GovernanceReceipt.TOOL_INTENT))
        query = ReceiptQuery(action_type=GovernanceReceipt.INTENTS_CHECKED)
        (check,) = (await ledger.page(query)).receipts
        assert check.action_name == "startup"
        assert check.decoded("inputs") == {"upto_seq": newest.receipts[0].seq}
        assert check.decoded("outputs") == {"interrupted": 3}
        assert not await report_interrupted(ledger)


async def test_an_intent_still_in_the_writers_queue_is_found(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db", flush_interval=60) as ledger:
        ledger.append(intent(new_receipt_id()))  # not yet committed
        assert len(await report_interrupted(ledger)) == 1


async def test_a_start_with_no_intents_records_no_check(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        assert not await report_interrupted(ledger)
        await ledger.flush()
        page = await ledger.page(ReceiptQuery(action_type=GovernanceReceipt.INTENTS_CHECKED))
        assert not page.receipts


async def test_intents_behind_the_last_check_mark_are_not_looked_at_again(tmp_path: Path) -> None:
    """What a previous start checked stays checked: only intents after its mark are read (a
    ledger of years is not walked at every start)."""
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        old = await ledger.append_durable(intent(new_receipt_id()))
        mark = Receipt(GovernanceReceipt.INTENTS_CHECKED, "startup", inputs={"upto_seq": old.seq})
        await ledger.append_durable(mark)
        assert not await report_interrupted(ledger)
        newer = await ledger.append_durable(intent(new_receipt_id()))
        assert [r.id for r in await report_interrupted(ledger)] == [newer.id]


async def test_an_intent_a_stopped_start_already_reported_is_not_reported_again(
    tmp_path: Path,
) -> None:
    """A start that recorded the interruption but stopped before its check mark: the next
    one finds the interrupted receipt under the intent and leaves it be."""
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        lost = await ledger.append_durable(intent(new_receipt_id()))
        reported = Receipt(
            GovernanceReceipt.TOOL_INTERRUPTED, "shell.exec", parent_id=lost.id,
            status=ReceiptStatus.FAILURE,
        )  # fmt: skip
        await ledger.append_durable(reported)
        assert not await report_interrupted(ledger)


async def test_a_damaged_check_mark_means_every_intent_is_looked_at(tmp_path: Path) -> None:
    async with SqliteLedger(tmp_path / "ledger.db") as ledger:
        lost = await ledger.append_durable(intent(new_receipt_id()))
        mark = Receipt(GovernanceReceipt.INTENTS_CHECKED, "startup", inputs={"upto_seq": "7"})
        await ledger.append_durable(mark)
        assert lost.seq == 1  # the first receipt: a mark read as anything but 0 would skip it
        assert [r.id for r in await report_interrupted(ledger)] == [lost.id]
