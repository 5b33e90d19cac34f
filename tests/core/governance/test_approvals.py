"""The approval store on its own over state.db: what a new approval holds, one approval per
inbound update, moves that happen only from the state named, oldest first, and the copies
and reminder it keeps."""

from __future__ import annotations

import aiosqlite
import pytest

from core.events import MessageRef
from core.governance.approvals import Approval, ApprovalState, ApprovalStore
from core.tools.action import ToolAction
from tests.core.governance.service_rig import HandClock

RM = ToolAction("shell.exec", "rm -rf dir14", {"in_workspace": True, "overwrites": False})
WRITE = ToolAction("file.write", None, {"path": "a.txt", "content": "é ✓"})


@pytest.fixture
def clock() -> HandClock:
    return HandClock(1000.0)


@pytest.fixture
async def store(db: aiosqlite.Connection, clock: HandClock) -> ApprovalStore:
    made = ApprovalStore(db, clock)
    await made.setup()
    return made


async def ask(store: ApprovalStore, action: ToolAction = RM, key: str | None = None) -> Approval:
    """A new approval for `action`, an hour to decide."""
    return await store.create(action, "T3", "deletes files", "card-1", "telegram", 3600.0, key=key)


async def test_a_new_approval_holds_exactly_what_was_asked(
    store: ApprovalStore, clock: HandClock
) -> None:
    made = await store.create(
        WRITE, "T2", "writes a file", "card-9", "gchat", 90.0, "quest-1", key="update:7"
    )
    assert made == Approval(
        made.id,
        WRITE,
        WRITE.digest,
        "T2",
        "writes a file",
        "card-9",
        ApprovalState.PENDING,
        "gchat",
        "quest-1",
        1000.0,
        1090.0,
        None,
        None,
        None,
        None,
        None,
    )
    assert len(made.id) == 16
    assert await store.get(made.id) == made
    assert await store.requested("update:7") == made


async def test_one_approval_per_update_whatever_became_of_it(store: ApprovalStore) -> None:
    first = await ask(store, key="update:1")
    assert await store.move(first.id, ApprovalState.PENDING, ApprovalState.DENIED)
    again = await ask(store, WRITE, key="update:1")  # the update handled again
    assert (again.id, again.action, again.state) == (first.id, RM, ApprovalState.DENIED)
    other = await ask(store, key="update:2")
    assert other.id != first.id
    # Without a key, each request is a question of its own.
    assert len({(await ask(store)).id, (await ask(store)).id}) == 2
    assert await store.count(ApprovalState.PENDING) == 3


async def test_unknown_ids_and_keys_name_nothing(store: ApprovalStore) -> None:
    await ask(store, key="update:1")
    assert await store.get("nope") is None
    assert await store.requested("update:2") is None


async def test_a_move_happens_only_from_the_state_named(
    store: ApprovalStore, clock: HandClock
) -> None:
    approval, bystander = await ask(store), await ask(store)
    assert not await store.move(approval.id, ApprovalState.APPROVED, ApprovalState.EXECUTING)
    assert await store.move(
        approval.id, ApprovalState.PENDING, ApprovalState.APPROVED, decided_by="ada", decided_at=5.0
    )
    assert not await store.move(approval.id, ApprovalState.PENDING, ApprovalState.DENIED)
    moved = await store.get(approval.id)
    assert moved is not None
    assert (moved.state, moved.decided_by, moved.decided_at) == (ApprovalState.APPROVED, "ada", 5.0)
    assert await store.get(bystander.id) == bystander  # untouched
    assert not await store.move("nope", ApprovalState.PENDING, ApprovalState.DENIED)


async def test_approvals_in_states_come_oldest_first_and_bounded(
    store: ApprovalStore, clock: HandClock
) -> None:
    made = []
    for n in range(4):
        clock.now = 2000.0 - n  # each asked a second before the one before
        made.append(await ask(store))
    await store.move(made[1].id, ApprovalState.PENDING, ApprovalState.APPROVED)
    await store.move(made[2].id, ApprovalState.PENDING, ApprovalState.EXPIRED)
    oldest_first = [a.id for a in reversed(made)]
    pending = await store.in_states(ApprovalState.PENDING)
    assert [a.id for a in pending] == [made[3].id, made[0].id]
    either = await store.in_states(ApprovalState.PENDING, ApprovalState.APPROVED)
    assert [a.id for a in either] == [i for i in oldest_first if i != made[2].id]
    every = await store.in_states(*ApprovalState)
    assert [a.id for a in every] == oldest_first
    assert [a.id for a in await store.in_states(*ApprovalState, limit=2)] == oldest_first[:2]
    assert await store.in_states(ApprovalState.EXECUTED) == []
    counts = {state: await store.count(state) for state in ApprovalState}
    assert {s: n for s, n in counts.items() if n} == {
        ApprovalState.PENDING: 2,
        ApprovalState.APPROVED: 1,
        ApprovalState.EXPIRED: 1,
    }


async def test_each_copy_of_a_card_is_kept_once(store: ApprovalStore) -> None:
    approval, other = await ask(store), await ask(store)
    telegram = MessageRef("telegram", "42", "100")
    gchat = MessageRef("gchat", "spaces/x", "spaces/x/messages/1")
    for ref in (telegram, gchat, telegram):  # a copy delivered twice is one copy
        await store.add_copy(approval.id, ref)
    await store.add_copy(other.id, MessageRef("telegram", "42", "101"))
    assert set(await store.copies(approval.id)) == {telegram, gchat}
    assert len(await store.copies(approval.id)) == 2
    assert await store.copies("nope") == []


async def test_a_reminder_is_claimed_once(store: ApprovalStore) -> None:
    approval, other = await ask(store), await ask(store)
    assert await store.claim_reminder(approval.id)
    assert not await store.claim_reminder(approval.id)
    assert await store.claim_reminder(other.id)


async def test_setting_up_again_keeps_every_approval(
    store: ApprovalStore, db: aiosqlite.Connection
) -> None:
    kept = await ask(store, key="update:1")
    await ask(store, key="update:2")
    await store.setup()
    assert await store.requested("update:1") == kept
    with pytest.raises(Exception, match="UNIQUE"):  # the index still holds
        await db.execute(  # a second approval for one update, by hand
            "UPDATE approvals SET request_key = 'update:1' WHERE id != ?", (kept.id,)
        )


async def test_states_are_stored_in_the_words_earlier_versions_wrote(
    store: ApprovalStore, db: aiosqlite.Connection
) -> None:
    words = {
        "pending": ApprovalState.PENDING,
        "approved": ApprovalState.APPROVED,
        "executing": ApprovalState.EXECUTING,
        "executed": ApprovalState.EXECUTED,
        "not_run": ApprovalState.NOT_RUN,
        "denied": ApprovalState.DENIED,
        "expired": ApprovalState.EXPIRED,
        "interrupted": ApprovalState.INTERRUPTED,
    }
    for word, state in words.items():
        approval = await ask(store)
        await db.execute("UPDATE approvals SET state = ? WHERE id = ?", (word, approval.id))
        read = await store.get(approval.id)
        assert read is not None
        assert read.state is state


async def test_the_tables_version_is_kept_where_earlier_versions_look_for_it(
    store: ApprovalStore, db: aiosqlite.Connection
) -> None:
    # A state.db from an earlier Lancelot says under this name that request_key was added;
    # under any other, setup would add it again and the start would fail.
    async with db.execute("SELECT version FROM schema_versions WHERE owner = 'approvals'") as cur:
        assert await cur.fetchall() == [(2,)]
