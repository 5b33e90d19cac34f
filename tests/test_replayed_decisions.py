"""The suite's guard on decisions finds a recorded decision that does not replay."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bot.governance import soul_store
from bot.ledger import LEDGER_FILE
from core.governance.gateway import decision_receipt
from core.governance.policy import PolicyEngine
from core.receipts.ledger import SqliteLedger
from core.tools.action import ToolAction
from core.tools.capability import CapabilityTokens
from tests.replayed_decisions import mismatches


async def test_a_decision_recorded_otherwise_than_its_inputs_decide_is_found(
    tmp_path: Path,
) -> None:
    root = tmp_path / "out" / "of" / "reach"  # of this test's own guard, which would fail it
    home = root / "home"
    home.mkdir(parents=True)
    soul = soul_store(home).load_active()
    engine = PolicyEngine(lambda: soul, CapabilityTokens(b"k" * 32))
    async with SqliteLedger(home / LEDGER_FILE) as ledger:
        for command in ("ls", "rm -rf /"):
            action = ToolAction("shell.exec", command, {})
            decision, inputs = engine.judge(action)
            ledger.append(decision_receipt(action, decision, inputs=inputs))
        await ledger.flush()
        assert mismatches(root) == []
        action = ToolAction("shell.exec", "rm -rf /", {})
        decision, inputs = engine.judge(action)
        forged = decision_receipt(action, decision, inputs=inputs)
        ledger.append(replace(forged, outputs={**forged.outputs, "verdict": "allow"}))
        await ledger.flush()
    assert mismatches(root) == [
        f"{home / LEDGER_FILE}: step 3 (rm -rf /): verdict: allow, now deny"
    ]


def test_a_file_that_is_not_a_ledger_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / LEDGER_FILE).write_bytes(b"not a database")
    assert mismatches(tmp_path) == []
