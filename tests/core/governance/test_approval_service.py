"""The approval service's own promises: a request replayed after a crash gets the approval
made the first time (its card again while it waits, no second request receipt); whoever waits
hears the approval's id before its card goes out; a wait cut by a shutdown leaves the question
open for after the restart; leaving the service stops its alarm clock."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from bot.app import Lancelot, assemble
from core.config import Settings
from core.events import ButtonPress
from core.governance.approval_service import ApprovalService
from core.governance.approvals import Approval, ApprovalState, ApprovalStore
from core.governance.execution import RunReport
from core.runtime.tasks import Supervisor
from tests.core.governance.service_rig import (
    HandClock,
    cards_with_buttons,
    deleting,
    press,
    requested,
    service_on,
    store_of,
)
from tests.fakes.channel import MemoryChannel
from tests.fakes.owner import CHAT, OWNER


async def test_a_replayed_request_gets_the_first_approval_and_its_card_again(
    app: Lancelot, phone: MemoryChannel
) -> None:
    service = service_on(app)
    action, decision = deleting(app, "dir14.txt")
    first = await service.request(action, decision, "memory", key="update:1")
    assert (await requested(app), cards_with_buttons(phone)) == (1, 1)
    # The same update handled again: the same approval, its card sent again (a crash may
    # have kept the first from going out), and no second request in the ledger.
    assert await service.request(action, decision, "memory", key="update:1") == first
    assert (await requested(app), cards_with_buttons(phone)) == (1, 2)
    # Another update is another question.
    other = await service.request(action, decision, "memory", key="update:2")
    assert other != first
    assert (await requested(app), cards_with_buttons(phone)) == (2, 3)


async def test_a_replay_after_the_decision_sends_no_card(
    app: Lancelot, phone: MemoryChannel
) -> None:
    service = service_on(app)
    resumed: list[Approval] = []

    async def resume(approval: Approval, report: RunReport) -> None:
        resumed.append(approval)

    service.when_unwaited(resume)
    action, decision = deleting(app, "dir15.txt")
    first = await service.request(action, decision, "memory", key="update:1")
    approval = await store_of(app).get(first)
    assert approval is not None
    card = await press(service, approval, phone, "deny")
    assert card is not None
    assert card.title == "Denied"
    assert card.body.splitlines()[-1].startswith("Denied by owner at ")  # and no other note
    assert resumed == []  # nothing ran, so there is no task to pick up
    sent = cards_with_buttons(phone)
    assert await service.asked("update:1") == first
    assert await service.asked("update:never") is None
    assert cards_with_buttons(phone) == sent  # a decided question is not asked again
    assert await requested(app) == 1


async def test_the_waiter_hears_the_id_before_the_card_goes_out(
    app: Lancelot, phone: MemoryChannel
) -> None:
    service = service_on(app)
    heard: list[tuple[str, int]] = []

    async def note(approval_id: str) -> None:
        heard.append((approval_id, cards_with_buttons(phone)))

    action, decision = deleting(app, "old.txt")
    waiting = asyncio.create_task(service.request_and_wait(action, decision, "memory", asked=note))
    await phone.next_card()
    [(approval_id, cards_then)] = heard
    assert cards_then == 0
    approval = await store_of(app).get(approval_id)
    assert approval is not None
    await press(service, approval, phone, "deny")
    settled = await asyncio.wait_for(waiting, 5)
    assert settled.approval.id == approval_id
    assert settled.approval.state is ApprovalState.DENIED


async def test_a_wait_cut_short_leaves_the_question_to_whoever_picks_the_task_up(
    app: Lancelot, phone: MemoryChannel
) -> None:
    # A shutdown cancels the waiting task (no Stop): the question stays open, and an Approve
    # tapped later runs it and hands what ran to the listener that resumes the task.
    service = service_on(app)
    resumed: list[tuple[str, str]] = []

    async def resume(approval: Approval, report: RunReport) -> None:
        resumed.append((approval.id, report.text))

    service.when_unwaited(resume)
    action, decision = deleting(app, "old.txt")
    waiting = asyncio.create_task(service.request_and_wait(action, decision, "memory"))
    await phone.next_card()
    waiting.cancel()
    await asyncio.wait([waiting])
    assert waiting.cancelled()  # cancelled as asked, no error of its own
    [approval] = await store_of(app).in_states(ApprovalState.PENDING)
    assert approval.action == action
    assert resumed == []
    await press(service, approval, phone, "approve")
    assert not (app.home / "workspace" / "old.txt").exists()
    [(approval_id, text)] = resumed
    assert approval_id == approval.id
    assert "old.txt" in text


async def test_leaving_the_service_stops_its_alarm_clock(app: Lancelot) -> None:
    tasks = Supervisor()
    async with service_on(app, tasks=tasks):
        assert tasks.running == 1  # the loop that expires and reminds
    assert tasks.running == 0
    assert tasks.died() == ()


async def test_a_restart_expires_what_lapsed_meanwhile_and_finishes_what_was_approved(
    app: Lancelot, phone: MemoryChannel
) -> None:
    clock = HandClock()
    service = service_on(app, clock)
    lapsed = await store_of(app).get(await service.request(*deleting(app, "a.txt"), "memory"))
    on_time = await store_of(app).get(await service.request(*deleting(app, "b.txt"), "memory"))
    approved = await store_of(app).get(await service.request(*deleting(app, "c.txt"), "memory"))
    running = await store_of(app).get(await service.request(*deleting(app, "d.txt"), "memory"))
    assert running is not None
    await app.state.execute(  # d.txt was being deleted when Lancelot stopped
        "UPDATE approvals SET state = ? WHERE id = ?", (ApprovalState.EXECUTING.value, running.id)
    )
    assert lapsed is not None
    assert on_time is not None
    assert approved is not None
    # c.txt approved, then Lancelot stopped before it ran; it restarts at b.txt's very
    # deadline, a moment after a.txt's.
    await app.state.execute(
        "UPDATE approvals SET state = ? WHERE id = ?", (ApprovalState.APPROVED.value, approved.id)
    )
    clock.now = on_time.expires_at
    await app.state.execute(
        "UPDATE approvals SET expires_at = ? WHERE id = ?", (clock.now - 0.001, lapsed.id)
    )
    await service_on(app, clock).reconcile()
    states = {a.id: a.state for a in [lapsed, on_time, approved, running]}
    for approval_id in states:
        settled = await store_of(app).get(approval_id)
        assert settled is not None
        states[approval_id] = settled.state
    assert states == {
        lapsed.id: ApprovalState.EXPIRED,
        on_time.id: ApprovalState.PENDING,
        approved.id: ApprovalState.EXECUTED,
        running.id: ApprovalState.INTERRUPTED,  # never run again
    }
    assert not (app.home / "workspace" / "c.txt").exists()
    edited = {card.correlation_id: card.title for _, card in phone.edits}
    assert edited[lapsed.card_id] == "Expired"
    assert edited[approved.card_id] == "Executed"
    assert edited[running.card_id] == "Interrupted"
    assert on_time.card_id not in edited


async def test_an_undecided_approval_is_reminded_once_however_often_the_clock_looks(
    app: Lancelot, phone: MemoryChannel
) -> None:
    clock = HandClock()
    async with service_on(app, clock, remind_after=10.0) as service:
        waiting = await store_of(app).get(await service.request(*deleting(app, "a.txt"), "m"))
        assert waiting is not None
        clock.now = waiting.created_at + 10.0  # its reminder is due; the others' are not
        for name in ("b.txt", "c.txt", "d.txt"):  # each new approval wakes the alarm clock
            await service.request(*deleting(app, name), "memory")
            await asyncio.sleep(0.2)
    reminders = [c for _, c in phone.delivered if c.title.startswith("Reminder:")]
    assert [c.correlation_id for c in reminders] == [waiting.card_id]


async def test_whoever_waits_hears_when_the_approval_lapses(
    app: Lancelot, phone: MemoryChannel
) -> None:
    clock = HandClock()
    service = service_on(app, clock)
    action, decision = deleting(app, "old.txt")
    waiting = asyncio.create_task(service.request_and_wait(action, decision, "memory"))
    await phone.next_card()
    [approval] = await store_of(app).in_states(ApprovalState.PENDING)
    clock.now = approval.expires_at + 1
    await press(service, approval, phone, "approve")  # too late: it lapses instead
    settled = await asyncio.wait_for(waiting, 5)
    assert settled.approval.state is ApprovalState.EXPIRED
    assert settled.report is None
    assert (app.home / "workspace" / "old.txt").exists()


class OvertakenStore(ApprovalStore):
    """The app's approvals, whose read of what an update asked for is overtaken by `tap`
    (once): the owner's tap lands after the row was read, before the reader looks again."""

    def __init__(self, app: Lancelot) -> None:
        super().__init__(app.state)
        self.tap: Callable[[], Awaitable[object]] | None = None

    async def requested(self, key: str) -> Approval | None:
        found = await super().requested(key)
        if self.tap is not None:
            tap, self.tap = self.tap, None
            await tap()
        return found


async def asked_then_shut_down(
    service: ApprovalService, app: Lancelot, phone: MemoryChannel, key: str
) -> Approval:
    """A step asks under `key` and waits; a shutdown cuts the wait: the question stays open."""
    action, decision = deleting(app, "old.txt")
    waiting = asyncio.create_task(service.request_and_wait(action, decision, "memory", key=key))
    await phone.next_card()
    waiting.cancel()
    await asyncio.wait([waiting])
    [approval] = await store_of(app).in_states(ApprovalState.PENDING)
    return approval


async def test_a_tap_that_lands_while_the_step_is_redone_settles_its_wait(
    app: Lancelot, phone: MemoryChannel
) -> None:
    store = OvertakenStore(app)
    service = service_on(app, store=store)
    approval = await asked_then_shut_down(service, app, phone, "update:1:step:1")
    cards = cards_with_buttons(phone)
    # The restart redoes the step; the owner's Deny lands just after its approval was read.
    store.tap = lambda: press(service, approval, phone, "deny")
    settled = await asyncio.wait_for(service.wait_again("update:1:step:1"), 5)
    assert settled is not None
    assert (settled.approval.id, settled.approval.state) == (approval.id, ApprovalState.DENIED)
    assert cards_with_buttons(phone) == cards  # no card for a question already answered
    assert await service.wait_again("update:1:step:2") is None  # that step never asked


async def test_an_approved_step_redone_gets_no_card_and_hears_its_one_run(
    app: Lancelot, phone: MemoryChannel
) -> None:
    service = service_on(app)
    approval = await asked_then_shut_down(service, app, phone, "update:1:step:1")
    await app.state.execute(  # approved just before Lancelot stopped, not yet run
        "UPDATE approvals SET state = ? WHERE id = ?", (ApprovalState.APPROVED.value, approval.id)
    )
    cards = cards_with_buttons(phone)
    listening = asyncio.Event()

    async def heard(approval_id: str) -> None:
        listening.set()

    waiting = asyncio.create_task(service.wait_again("update:1:step:1", heard))
    await asyncio.wait_for(listening.wait(), 5)
    await service.reconcile()  # the restart finishes what was approved
    settled = await asyncio.wait_for(waiting, 5)
    assert settled is not None
    assert settled.approval.state is ApprovalState.EXECUTED
    assert settled.report is not None
    assert "old.txt" in settled.report.text
    assert not (app.home / "workspace" / "old.txt").exists()
    assert cards_with_buttons(phone) == cards  # an approved question is not asked again


async def test_after_a_restart_a_tap_on_one_copy_edits_every_copy(settings: Settings) -> None:
    async with assemble(settings, web=False) as first:
        phone = MemoryChannel()
        await first.attach(phone)
        assert first.governance is not None
        service = first.governance.approvals
        await service.request(*deleting(first, "old.txt"), "memory")
        assert await service.resend_pending(phone.name, CHAT) == 1  # /approvals: a second copy
        copies = [(ref, card) for ref, card in phone.delivered if card.buttons]
        assert len(copies) == 2
    async with assemble(settings, web=False) as second:
        phone2 = MemoryChannel()
        await second.attach(phone2)
        ref, card = copies[0]
        token = next(b.action_token for b in card.buttons if b.label == "Approve")
        await second.bus.publish(ButtonPress(phone.name, OWNER, CHAT, ref, token))
        await second.bus.drained()
        edited = {ref: card.title for ref, card in phone2.edits}
        assert edited == {copies[0][0]: "Executed", copies[1][0]: "Executed"}
        assert not (second.home / "workspace" / "old.txt").exists()
