"""The watchdog's judgement: quiet while beats come, one "down" after the silence limit,
nothing more until beats resume, then one "back"; a clean stop or a stale file is no life."""

from __future__ import annotations

import pytest

from core.health.heartbeat import BeatState, Heartbeat
from core.health.watch import NoticeKind, Watch

LIMIT = 3.0


def beat(count: int, pid: int = 10, state: BeatState = BeatState.RUNNING) -> Heartbeat:
    return Heartbeat(pid, started=1000.0, at=1000.0 + count, count=count, every=1.0, state=state)


def test_beats_within_the_limit_owe_nothing() -> None:
    watch = Watch(LIMIT, now=0.0)
    for second in range(20):
        assert watch.observe(beat(second), now=float(second)) is None
    assert not watch.down


def test_silence_past_the_limit_owes_one_down_notice_until_it_is_delivered() -> None:
    watch = Watch(LIMIT, now=0.0)
    watch.observe(beat(1), now=1.0)
    assert watch.observe(beat(1), now=3.9) is None  # the same beat read again: silence
    notice = watch.observe(beat(1), now=4.0)
    assert notice is not None
    assert notice.kind is NoticeKind.DOWN
    assert notice.last == beat(1)
    assert notice.silent == pytest.approx(3.0)
    assert watch.observe(beat(1), now=5.0) == notice  # still owed: not delivered yet
    watch.delivered(notice)
    assert [watch.observe(beat(1), now=6.0 + s) for s in range(100)] == [None] * 100  # once


def test_beats_after_the_outage_owe_one_back_notice() -> None:
    watch = Watch(LIMIT, now=0.0)
    watch.observe(beat(1), now=1.0)
    down = watch.observe(None, now=5.0)  # the file is gone: no beat
    assert down is not None
    watch.delivered(down)
    back = watch.observe(beat(1, pid=11), now=30.0)  # a new process, its first beat
    assert back is not None
    assert back.kind is NoticeKind.BACK
    assert back.back == beat(1, pid=11)
    assert back.last == beat(1)
    assert back.silent == pytest.approx(29.0)
    assert not watch.down
    watch.delivered(back)
    assert watch.observe(beat(2, pid=11), now=31.0) is None


def test_a_clean_stop_is_no_sign_of_life_and_the_notice_says_it_stopped() -> None:
    watch = Watch(LIMIT, now=0.0)
    watch.observe(beat(1), now=1.0)
    assert watch.observe(beat(2, state=BeatState.STOPPING), now=2.0) is None
    notice = watch.observe(beat(2, state=BeatState.STOPPING), now=4.0)
    assert notice is not None
    assert notice.kind is NoticeKind.DOWN
    assert notice.last == beat(1)  # the last running beat: silence counts from it
    assert notice.final == beat(2, state=BeatState.STOPPING)


def test_no_beat_at_all_since_the_watch_began_is_an_outage() -> None:
    watch = Watch(LIMIT, now=100.0)
    assert watch.observe(None, now=102.9) is None
    notice = watch.observe(None, now=103.0)
    assert notice is not None
    assert notice.kind is NoticeKind.DOWN
    assert notice.last is None


def test_back_before_the_down_notice_went_out_owes_only_the_back_notice() -> None:
    watch = Watch(LIMIT, now=0.0)
    watch.observe(beat(1), now=1.0)
    down = watch.observe(beat(1), now=4.0)
    assert down is not None  # never delivered (the owner's chat was unreachable)
    back = watch.observe(beat(2), now=9.0)
    assert back is not None
    assert back.kind is NoticeKind.BACK
    assert watch.due == back
    watch.delivered(down)  # a late answer for the old notice does not clear the new one
    assert watch.due == back


def test_a_second_outage_owes_a_second_down_notice() -> None:
    watch = Watch(LIMIT, now=0.0)
    watch.observe(beat(1), now=1.0)
    first = watch.observe(beat(1), now=4.0)
    assert first is not None
    watch.delivered(first)
    back = watch.observe(beat(2), now=5.0)
    assert back is not None
    watch.delivered(back)
    second = watch.observe(beat(2), now=8.0)
    assert second is not None
    assert second.kind is NoticeKind.DOWN
    assert second.last == beat(2)


@pytest.mark.parametrize("limit", [0.0, -1.0])
def test_a_limit_that_is_not_positive_is_refused(limit: float) -> None:
    with pytest.raises(ValueError, match="positive"):
        Watch(limit, now=0.0)
