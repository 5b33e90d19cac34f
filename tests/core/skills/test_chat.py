"""/skills from a phone: the list and its buttons, running a skill, and a new skill from
proposal to approval to install to enable to run, all through the real app and bus."""

from __future__ import annotations

import json

from bot.app import Lancelot, assemble
from core.config import Settings
from core.events import ButtonPress, CardKind
from core.features import FeatureFlags
from tests.core.skills.builder import receipts, registry_of
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import CHAT, OWNER, say, tap


async def test_list_shows_state_and_a_button_toggles_a_skill(
    app: Lancelot, phone: MemoryChannel
) -> None:
    card = await say(app, phone, "/skills")
    assert "command_runner 1.0.0: enabled (SYSTEM, UNSIGNED)" in card.body
    assert "Disable command_runner" in [b.label for b in card.buttons]
    edited = await tap(app, phone, card, "Disable command_runner")
    assert edited is not None
    assert "command_runner 1.0.0: disabled" in edited.body
    assert "Enable command_runner" in [b.label for b in edited.buttons]
    record = await registry_of(app).get("command_runner")
    assert record is not None
    assert not record.enabled
    ran = await say(app, phone, '/skills run command_runner {"command": "ls"}')
    assert ran.title == "Skill command_runner: not run"
    assert "disabled" in ran.body
    # The edited card's fresh button turns it back on.
    again = await tap(app, phone, edited, "Enable command_runner")
    assert again is not None
    assert "command_runner 1.0.0: enabled" in again.body


async def test_forged_press_is_refused_and_changes_nothing(
    app: Lancelot, phone: MemoryChannel
) -> None:
    card = await say(app, phone, "/skills")
    ref = phone.delivered[-1][0]
    token = next(b.action_token for b in card.buttons if b.label == "Disable command_runner")
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    await app.bus.publish(ButtonPress(phone.name, OWNER, CHAT, ref, forged))
    _, answer = await phone.next_card()
    assert answer.title == "Button not accepted"
    record = await registry_of(app).get("command_runner")
    assert record is not None
    assert record.enabled
    assert [r.action_name for r in await receipts(app, "button_refused")] == ["forged"]


async def test_command_runner_from_chat(app: Lancelot, phone: MemoryChannel) -> None:
    (app.home / "workspace" / "notes.txt").write_text("hello")
    card = await say(app, phone, '/skills run command_runner {"command": "ls /workspace"}')
    assert card.title == "Skill command_runner: done"
    outputs = json.loads(card.body[card.body.index("{") :])
    assert outputs["status"] == "done"
    assert outputs["exit_code"] == 0
    assert "notes.txt" in outputs["output"]
    [run] = await receipts(app, "skill_run")
    [command] = [r for r in await receipts(app, "command") if r.action_name == "skills"]
    assert run.parent_id == command.parent_id  # both hang off the owner's message


async def test_bad_arguments_are_explained(app: Lancelot, phone: MemoryChannel) -> None:
    assert (await say(app, phone, "/skills run command_runner {oops")).title == (
        "Arguments are not JSON"
    )
    card = await say(app, phone, '/skills run command_runner {"cmd": "ls"}')
    assert card.title == "Skill command_runner: not run"
    assert "no input named cmd" in card.body


async def test_new_skill_proposed_approved_installed_enabled_and_run(
    app: Lancelot, phone: MemoryChannel
) -> None:
    proposal = await say(app, phone, "/skills new greeter Says hello back.")
    assert proposal.kind is CardKind.APPROVAL
    assert proposal.title == "Install the skill greeter 0.1.0?"
    assert [b.label for b in proposal.buttons] == ["Install and enable", "Install disabled", "Deny"]
    assert await registry_of(app).get("greeter") is None  # nothing before the owner's tap

    installed = await tap(app, phone, proposal, "Install disabled")
    assert installed is not None
    assert installed.title == "Installed: skill greeter"
    assert "disabled" in installed.body
    record = await registry_of(app).get("greeter")
    assert record is not None
    assert (record.ownership, record.enabled) == ("USER", False)

    refused = await say(app, phone, '/skills run greeter {"text": "hi"}')
    assert "disabled" in refused.body
    listing = await say(app, phone, "/skills")
    await tap(app, phone, listing, "Enable greeter")
    ran = await say(app, phone, '/skills run greeter {"text": "hi"}')
    assert ran.title == "Skill greeter: done"
    assert json.loads(ran.body) == {"text": "hi"}
    decided = await receipts(app, "skill_proposal_decided")
    assert [(r.action_name, r.status) for r in decided] == [("greeter", "success")]
    assert not any((app.home / "skill-proposals").iterdir())  # staging cleaned up


async def test_denied_proposal_installs_nothing(app: Lancelot, phone: MemoryChannel) -> None:
    proposal = await say(app, phone, "/skills new greeter")
    denied = await tap(app, phone, proposal, "Deny")
    assert denied is not None
    assert denied.title == "Denied: skill greeter"
    assert denied.buttons == ()
    assert await registry_of(app).get("greeter") is None
    # The other buttons of the decided card no longer work.
    await tap(app, phone, proposal, "Install and enable")
    assert await registry_of(app).get("greeter") is None


async def test_proposal_changed_before_approval_is_refused(
    app: Lancelot, phone: MemoryChannel
) -> None:
    proposal = await say(app, phone, "/skills new greeter")
    [staged] = (app.home / "skill-proposals").glob("*/greeter/skill.py")
    staged.write_text("import os\nos.system('echo pwned')\n")
    outcome = await tap(app, phone, proposal, "Install and enable")
    assert outcome is not None
    assert "changed after it was proposed" in outcome.body
    assert await registry_of(app).get("greeter") is None


async def test_invalid_new_skill_name(app: Lancelot, phone: MemoryChannel) -> None:
    card = await say(app, phone, "/skills new ../../etc")
    assert card.title == "Skill not proposed"


async def test_feature_switch_off_removes_skills(settings: Settings) -> None:
    features = FeatureFlags({"FEATURE_SKILLS": "false"})
    async with assemble(settings, web=False, features=features) as app:
        phone = MemoryChannel()
        await app.attach(phone)
        card = await say(app, phone, "/skills")
        assert card.title == "Unknown command"
        assert not (app.home / "skills").exists()


async def test_help_offers_skills(app: Lancelot, phone: MemoryChannel) -> None:
    card = await say(app, phone, "/help")
    assert "/skills" in card.body
