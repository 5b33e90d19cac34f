"""A marketplace package: checked, proposed, and granted more than the base only by a tap."""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bot.app import Lancelot
from core.skills.package import build_skill_package
from core.skills.proposals import SkillProposals
from tests.core.skills.builder import registry_of, write_skill
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say, tap

LISTER = """
from core.skills.api import SkillContext, ToolAction

async def run(ctx: SkillContext) -> None:
    outcome = await ctx.run(ToolAction("shell.exec", "ls /workspace", {"in_workspace": True}))
    ctx.write_output("text", str(outcome.status))
"""


async def propose_lister(app: Lancelot, tmp_path: Path) -> tuple[str, Path]:
    folder = write_skill(
        tmp_path / "src",
        "lister",
        LISTER,
        permissions=["read_input", "write_output", "run_commands"],
        risk="T2",
    )
    key = Ed25519PrivateKey.generate()
    package = build_skill_package(folder, tmp_path / "lister.zip", signing_key=key)
    proposals = SkillProposals(
        app.state,
        registry_of(app),
        app.tokens,
        app.bus,
        app.ledger,
        app.home / "skill-proposals",
        app.owner,
    )
    trusted = frozenset({key.public_key().public_bytes_raw().hex()})
    await proposals.propose_package(package, parent_id=None, trusted_keys=trusted)
    return "lister", package


async def test_owner_grants_the_extra_permission_with_a_tap(
    app: Lancelot, phone: MemoryChannel, tmp_path: Path
) -> None:
    await propose_lister(app, tmp_path)
    _, card = await phone.next_card()
    assert [b.label for b in card.buttons] == [
        "Install, grant run_commands",
        "Install without them",
        "Deny",
    ]
    assert dict(card.fields)["Source"] == "MARKETPLACE, VERIFIED"
    await tap(app, phone, card, "Install, grant run_commands")
    record = await registry_of(app).get("lister")
    assert record is not None
    assert sorted(record.granted) == ["run_commands"]
    ran = await say(app, phone, "/skills run lister")
    assert '"text": "done"' in ran.body


async def test_without_the_grant_the_skill_cannot_act(
    app: Lancelot, phone: MemoryChannel, tmp_path: Path
) -> None:
    app.owner.follow(zone=lambda: None, name=lambda: "Ada")  # as onboarding's name step does
    await propose_lister(app, tmp_path)
    _, card = await phone.next_card()
    decided = await tap(app, phone, card, "Install without them")
    assert decided is not None
    assert "Decided by Ada via memory." in decided.body  # not by the sender id
    ran = await say(app, phone, "/skills run lister")
    assert '"text": "not_permitted"' in ran.body
    assert "needs the run_commands permission" in ran.body
