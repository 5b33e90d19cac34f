"""What `assemble()` returns is complete and fixed: every kit is there, nothing is added later."""

from __future__ import annotations

import dataclasses

import pytest

from bot.app import Lancelot
from core.commands.registry import Router
from core.events import Card, CardKind
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import say


async def test_every_subsystem_is_there_once_assembled(app: Lancelot) -> None:
    assert app.governance is not None
    assert app.skill_runner is not None
    assert app.scheduler is app.scheduler  # a field, not something built on each read
    assert app.alerts is not None
    assert app.agent is not None
    assert app.models.has_flagship() is False  # no provider configured in tests


async def test_the_assembled_app_cannot_be_changed(app: Lancelot) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        app.governance = None  # type: ignore[misc]


async def test_no_command_or_button_can_be_registered_after_assembly(app: Lancelot) -> None:
    async def handler(ctx: object) -> Card:
        return Card(kind=CardKind.REPLY, title="hijacked")

    late = Router("late")
    late.command("later", "a newcomer", handler)
    with pytest.raises(RuntimeError, match="frozen"):
        app.commands.include(late)
    assert app.commands.get("later") is None


async def test_what_assembly_registered_still_answers(app: Lancelot, phone: MemoryChannel) -> None:
    card = await say(app, phone, "/status")
    assert card.title == "Status"


@pytest.mark.app(features={"FEATURE_SOUL": "false"})
async def test_without_the_soul_governance_and_skills_are_absent_not_half_built(
    app: Lancelot, phone: MemoryChannel
) -> None:
    assert app.governance is None
    assert app.skill_runner is None
    help_card = await say(app, phone, "/help")
    assert "/run" not in help_card.body


async def test_a_background_loop_that_dies_degrades_health(app: Lancelot) -> None:
    async def broken_loop() -> None:
        raise RuntimeError("lost its database")

    task = app.tasks.spawn(broken_loop(), name="approval-expiry")
    with pytest.raises(RuntimeError):
        await task
    snapshot = await app.health.check()
    assert not snapshot.ready
    assert "background task stopped: approval-expiry (RuntimeError)" in snapshot.degraded_reasons
