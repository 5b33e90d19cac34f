"""Every tool run leaves a ToolReceipt: capability, action, provider, redacted inputs, bounded
outputs, the policy snapshot and changed files with hashes; risky tools wait for the owner."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.app import Lancelot, assemble
from bot.tools import SANDBOX_PRIORITY, build_tool_router
from core.config import load_settings
from core.errors import ToolUnavailable
from core.events import CardKind
from core.features import FeatureFlags
from core.governance.execution import Executor
from core.governance.outcomes import OutcomeKind
from core.governance.policy import PolicyEngine
from core.governance.rollback import RollbackJournal
from core.receipts.base import ReceiptQuery
from core.receipts.ledger import SqliteLedger
from core.receipts.model import StoredReceipt
from core.receipts.redaction import Redactor
from core.tools.action import ToolAction
from core.tools.base import ToolResult
from core.tools.capability import CapabilityTokens
from core.tools.file_ops import FileOps
from core.tools.workspace import Workspace
from soul import SHIPPED_VERSIONS_DIR, SoulStore
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap
from tests.fakes.web_site import FakeSite


async def tool_runs(ledger: SqliteLedger) -> list[StoredReceipt]:
    await ledger.flush()
    page = await ledger.page(ReceiptQuery(action_type="tool_run", limit=100))
    return list(page.receipts)


@dataclass
class Rig:
    ws: Workspace
    tokens: CapabilityTokens
    policy: PolicyEngine
    executor: Executor
    ledger: SqliteLedger
    router: Any


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    async with SqliteLedger(tmp_path / "ledger.db", redactor=Redactor()) as ledger:
        ws = Workspace(tmp_path / "ws")
        tokens = CapabilityTokens(b"receipts")
        soul = SoulStore(SHIPPED_VERSIONS_DIR, tmp_path / "soul").load_active()
        policy = PolicyEngine(lambda: soul, tokens)
        router = build_tool_router(load_settings(environ={}), FeatureFlags({}), ws, tokens)
        journal = await RollbackJournal.create(ws, ledger, tmp_path)
        yield Rig(ws, tokens, policy, Executor(policy, router, ledger, journal), ledger, router)


async def test_a_file_write_receipt_names_provider_policy_and_hashes(rig: Rig) -> None:
    content = "api_key=sk-proj-" + "a" * 30 + "\n" + "x" * 3000
    action = FileOps(rig.ws, rig.tokens).action("file.write", path="notes/plan.md", content=content)
    decision = rig.policy.decide(action)
    report = await rig.executor.execute(
        action,
        decision.tier,
        capability=decision.capability,
        quest_id="q",
        policy=decision.snapshot(),
    )
    text = report.text
    assert await rig.executor.finish("q") is None  # the T1 step verified against its hash
    assert text.startswith("exit 0\nwrote 3047 bytes")
    (receipt,) = await tool_runs(rig.ledger)
    assert receipt.action_name == "file.write"
    meta, outputs, inputs = (receipt.decoded(k) for k in ("metadata", "outputs", "inputs"))
    assert meta["provider"] == "file_ops"
    assert meta["policy"] == {
        "verdict": "allow",
        "tier": "T1",
        "rules": ["file-write-workspace"],
        "kinds": ["file.write"],
        "reason": "",
        "auto_approved": False,
    }
    sha = hashlib.sha256(content.encode()).hexdigest()
    assert outputs["file_changes"] == {"/workspace/notes/plan.md": sha}
    assert outputs["provider"] == "file_ops"
    assert inputs["params"]["path"] == "notes/plan.md"
    assert inputs["params"]["content"].endswith("[3,047 characters]")  # bounded
    assert "sk-proj-" not in receipt.inputs  # redacted
    assert len(receipt.inputs) < 1000


class DownSandbox:
    """A sandbox provider whose engine is gone."""

    name = "docker_sandbox"

    async def run(self, action: ToolAction, capability: str | None) -> ToolResult:
        raise ToolUnavailable("docker engine unreachable")

    async def health(self) -> str | None:
        return "docker engine unreachable"


async def test_a_fallback_is_told_to_the_owner_and_kept_in_the_receipt(rig: Rig) -> None:
    sandbox = DownSandbox()
    rig.router.register(
        sandbox, ["shell.exec"], priority=SANDBOX_PRIORITY, health=sandbox.health, local=True
    )
    (rig.ws.root / "a.txt").write_text("a")
    action = ToolAction("shell.exec", "ls", {"in_workspace": True})
    decision = rig.policy.decide(action)
    text = (await rig.executor.execute(action, decision.tier, capability=decision.capability)).text
    assert text == (
        "exit 0\na.txt\n(ran on safe_repl; skipped docker_sandbox: docker engine unreachable)"
    )
    (receipt,) = await tool_runs(rig.ledger)
    assert receipt.decoded("metadata")["provider"] == "safe_repl"
    assert receipt.decoded("outputs")["fallback"] == "docker_sandbox: docker engine unreachable"


async def test_unknown_capability_and_safe_mode_refusals_leave_failure_receipts(
    tmp_path: Path, rig: Rig
) -> None:
    action = ToolAction("teleport", None, {})
    report = await rig.executor.execute(action, "T2", capability=rig.tokens.issue(action.digest))
    text = report.text
    assert text.startswith("Failed: no tool serves 'teleport'")
    safe = build_tool_router(
        load_settings(environ={}), FeatureFlags({"FEATURE_SAFE_MODE": "on"}), rig.ws, rig.tokens
    )
    executor = Executor(rig.policy, safe, rig.ledger)
    get = ToolAction("net.request", None, {"method": "GET", "url": "http://127.0.0.1/"})
    text = (await executor.execute(get, "T1", capability=rig.tokens.issue(get.digest))).text
    assert text.startswith("Refused by governance: safe mode allows only local sandbox tools")
    statuses = [r.status for r in await tool_runs(rig.ledger)]
    assert statuses == ["failure", "failure"]


# --- through the real app -----------------------------------------------------------------


@pytest.fixture
async def site() -> AsyncIterator[FakeSite]:
    async with FakeSite() as running:
        yield running


@pytest.fixture
async def app(tmp_path: Path, site: FakeSite) -> AsyncIterator[Lancelot]:
    deployer = f"{sys.executable} -c \"print('deployed v1')\""
    settings = load_settings(
        environ={
            "LANCELOT_HOME": str(tmp_path / "home"),
            "LANCELOT_TOOLS_DEPLOY_COMMAND": deployer,
            "LANCELOT_TOOLS_NETWORK_ALLOWLIST": "127.0.0.1",
        }
    )
    features = FeatureFlags({"FEATURE_TOOLS_NETWORK": "true"})
    async with assemble(settings, features=features, web=False) as lancelot:
        yield lancelot


async def test_run_from_chat_leaves_a_receipt_with_provider_and_policy(app: Lancelot) -> None:
    phone = MemoryChannel()
    await app.attach(phone)
    (app.home / "workspace" / "notes.txt").write_text("hello")
    card = await say(app, phone, "/run ls /workspace")
    assert "notes.txt" in card.body
    (receipt,) = await tool_runs(app.ledger)
    meta = receipt.decoded("metadata")
    # The Docker sandbox runs it when an engine and its image are here; else SafeREPL, saying so.
    expected = "safe_repl" if "(ran on safe_repl;" in card.body else "docker"
    assert meta["provider"] == meta["runner"] == expected
    assert meta["policy"]["verdict"] == "allow"
    assert meta["policy"]["rules"] == ["shell-read-only"]


async def test_status_tells_the_owner_when_safe_mode_is_on(tmp_path: Path) -> None:
    environ = {"LANCELOT_HOME": str(tmp_path / "home"), "LANCELOT_TOOLS_SAFE_MODE": "true"}
    async with assemble(load_settings(environ=environ), web=False) as lancelot:
        phone = MemoryChannel()
        await lancelot.attach(phone)
        card = await say(lancelot, phone, "/status")
        assert ("Tools", "safe mode (local only)") in card.fields
        listing = await say(lancelot, phone, "/run ls")  # SafeREPL is local: still runs
        assert listing.body.startswith("$ ls\nexit 0")


async def ask_owner(app: Lancelot, phone: MemoryChannel, action: ToolAction) -> Any:
    """What the agent does for a risky step: the one governed path decides and asks."""
    assert app.governance is not None
    outcome = await app.governance.gateway.run(
        action, via=phone.name, parent_id="step", quest_id=None, wait=False
    )
    assert (outcome.kind, outcome.tier) == (OutcomeKind.WAITING, "T3")
    return (await phone.next_card())[1]


@pytest.mark.parametrize(
    ("action", "provider", "expected"),
    [
        (ToolAction("deploy", None, {}), "deploy_ops", "deployed v1"),
        (ToolAction("net.request", None, {"method": "POST", "body": "x=1"}), "web_ops", "got x=1"),
    ],
    ids=["deploy", "post"],
)
async def test_risky_tools_wait_for_approval_then_run_with_a_receipt(
    app: Lancelot, site: FakeSite, action: ToolAction, provider: str, expected: str
) -> None:
    if action.capability == "net.request":
        action = ToolAction(action.capability, None, {**action.params, "url": f"{site.url}/echo"})
    phone = MemoryChannel()
    await app.attach(phone)
    card = await ask_owner(app, phone, action)
    assert card.kind is CardKind.APPROVAL
    assert await tool_runs(app.ledger) == []  # nothing ran before the owner's tap
    assert site.hits == []
    edited = await tap(app, phone, card, "Approve")
    assert edited is not None
    assert edited.title.startswith("Executed")
    assert expected in edited.body
    (receipt,) = await tool_runs(app.ledger)
    meta = receipt.decoded("metadata")
    assert meta["provider"] == provider
    assert meta["policy"]["tier"] == "T3"
    assert meta["policy"]["approved_by"] == "owner"
