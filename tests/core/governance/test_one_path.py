"""/run, the agent's run_command and a skill act through one governed path: the same command
leaves the same receipts, of the same kinds and shape, whoever asked."""

from __future__ import annotations

from pathlib import Path

from bot.app import assemble
from core.config import load_settings
from core.receipts.base import ReceiptQuery
from core.receipts.model import StoredReceipt
from core.receipts.registry import GovernanceReceipt
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say
from tests.fakes.scripted_model import ScriptedRouter, call, final

COMMAND = "ls /workspace"
DENIED = "rm -rf /"


async def _governed(ledger: object, since: int) -> list[StoredReceipt]:
    page = await ledger.page(ReceiptQuery(limit=500))  # type: ignore[attr-defined]
    kinds = {str(k) for k in GovernanceReceipt}
    return [r for r in reversed(page.receipts) if r.seq > since and r.action_type in kinds]


def _shape(receipts: list[StoredReceipt]) -> list[tuple[str, str, tuple[str, ...], str]]:
    """What must not depend on who asked: kind, verdict or capability, input keys, status."""
    return [
        (r.action_type, r.action_name, tuple(sorted(r.decoded("inputs") or {})), r.status)
        for r in receipts
    ]


async def test_the_same_command_leaves_the_same_receipts_from_run_agent_and_skill(
    tmp_path: Path,
) -> None:
    settings = load_settings(environ={"LANCELOT_HOME": str(tmp_path / "home")})
    model = ScriptedRouter(
        [
            call("run_command", command=COMMAND),
            final("Listed.", [("run_command", COMMAND)]),
            call("run_command", command=DENIED),
            final("Refused.", []),
        ]
    )
    async with assemble(settings, web=False, models=model) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        shapes = {}
        for who, ask in (
            ("run", f"/run {COMMAND}"),
            ("agent", "list my workspace"),
            ("skill", '/skills run command_runner {"command": "' + COMMAND + '"}'),
        ):
            await app.ledger.flush()
            since = await app.ledger.count()
            await say(app, phone, ask)
            await app.ledger.flush()
            shapes[who] = _shape(await _governed(app.ledger, since))
        denied = {}
        for who, ask in (("run", f"/run {DENIED}"), ("agent", "wipe everything")):
            await app.ledger.flush()
            since = await app.ledger.count()
            await say(app, phone, ask)
            await app.ledger.flush()
            denied[who] = _shape(await _governed(app.ledger, since))

    assert shapes["run"] == shapes["agent"] == shapes["skill"]
    assert [s[0] for s in shapes["run"]] == ["policy_decision", "tool_run"]
    assert denied["run"] == denied["agent"]
    assert [(s[0], s[3]) for s in denied["run"]] == [("policy_decision", "refused")]
