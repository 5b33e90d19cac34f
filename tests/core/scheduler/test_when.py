"""Reading the owner's times: exact readings, the ones asked back, and what is not a time."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from core.scheduler.quiet import quiet_until
from core.scheduler.when import Ambiguous, Every, Once, Unreadable, read_when
from soul.schema import QuietHours

PARIS = ZoneInfo("Europe/Paris")
NOW = datetime(2026, 11, 23, 14, 0, tzinfo=PARIS)  # a Monday afternoon


def at(*parts: int) -> Once:
    return Once(datetime(*parts, tzinfo=PARIS))  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "reading", "rest"),
    [
        ("in 20 minutes stretch", at(2026, 11, 23, 14, 20), "stretch"),
        ("in an hour to make tea", at(2026, 11, 23, 15, 0), "make tea"),
        ("at 9pm call Anna", at(2026, 11, 23, 21, 0), "call Anna"),
        ("at 9 tonight call Anna", at(2026, 11, 23, 21, 0), "call Anna"),
        ("at 13:30 lunch", at(2026, 11, 24, 13, 30), "lunch"),  # passed today: tomorrow
        ("tomorrow at 09:30 standup", at(2026, 11, 24, 9, 30), "standup"),
        ("on 4 March at 10am dentist", at(2027, 3, 4, 10, 0), "dentist"),
        ("on 2026-12-01 at 08:15 taxes", at(2026, 12, 1, 8, 15), "taxes"),
        ("on friday at noon call", at(2026, 11, 27, 12, 0), "call"),
        (
            "every weekday at 7:30am standup",
            Every("30 7 * * mon-fri", "every weekday at 07:30"),
            "standup",
        ),
        (
            "every Monday and Thursday at 18:00 gym",
            Every("0 18 * * mon,thu", "every Monday and Thursday at 18:00"),
            "gym",
        ),
        ("every 2 hours drink water", Every("0 */2 * * *", "every 2 hours"), "drink water"),
        (
            "0 8 * * 1 summarise the logs",
            Every("0 8 * * 1", "cron 0 8 * * 1"),
            "summarise the logs",
        ),
    ],
)
def test_exact_times(text: str, reading: Once | Every, rest: str) -> None:
    assert read_when(text, NOW) == (reading, rest)


def test_an_unmarked_hour_is_asked_back_in_time_order() -> None:
    reading, rest = read_when("at 9 to call Anna", NOW)
    assert isinstance(reading, Ambiguous)
    assert [label for label, _ in reading.choices] == ["Mon 23 Nov 21:00", "Tue 24 Nov 09:00"]
    assert rest == "call Anna"


def test_a_day_and_month_that_read_both_ways_are_asked_back() -> None:
    reading, _ = read_when("on 03/04 at 10am dentist", NOW)
    assert isinstance(reading, Ambiguous)
    assert [label for label, _ in reading.choices] == [
        "Thu 04 Mar 2027 10:00",
        "Sat 03 Apr 2027 10:00",
    ]
    clear, _ = read_when("on 13/04 at 10am dentist", NOW)
    assert clear == at(2027, 4, 13, 10, 0)


def test_every_monday_at_8_is_asked_back() -> None:
    reading, rest = read_when("every Monday at 8 summarise the logs", NOW)
    assert isinstance(reading, Ambiguous)
    assert [s for _, s in reading.choices] == [
        Every("0 8 * * mon", "every Monday at 08:00"),
        Every("0 20 * * mon", "every Monday at 20:00"),
    ]
    assert rest == "summarise the logs"


def test_a_past_moment_is_read_as_it_was_said() -> None:
    assert read_when("today at 9am call", NOW)[0] == at(2026, 11, 23, 9, 0)  # refused later


@pytest.mark.parametrize(
    "text",
    ["stretch", "later call Anna", "every 90 minutes stretch", "tomorrow call", "31/02 at 10am x"],
)
def test_what_is_not_a_time(text: str) -> None:
    assert isinstance(read_when(text, NOW)[0], Unreadable)


def test_quiet_hours_wrap_midnight() -> None:
    quiet = QuietHours(start="22:00", end="07:00", timezone="Europe/Paris")
    evening = datetime(2026, 11, 23, 23, 0, tzinfo=PARIS).timestamp()
    morning = datetime(2026, 11, 24, 6, 0, tzinfo=PARIS).timestamp()
    end = datetime(2026, 11, 24, 7, 0, tzinfo=PARIS).timestamp()
    assert quiet_until(quiet, evening) == end
    assert quiet_until(quiet, morning) == end
    assert quiet_until(quiet, NOW.timestamp()) is None
    assert quiet_until(None, evening) is None
