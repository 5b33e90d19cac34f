"""Times as the owner reads them: in their zone, with a date when not today, relative where it
helps; and the name they gave in place of their id."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from core.clock import machine_zone, parse_iso, spoken_time, time_left
from core.security.owner_view import OwnerView

TOKYO = ZoneInfo("Asia/Tokyo")
# 2026-11-28 10:00 in Tokyo is 01:00 UTC: the UTC date and hour differ from Tokyo's.
NOW = datetime(2026, 11, 28, 10, 0, tzinfo=TOKYO).timestamp()


def at(*parts: int) -> float:
    """A Tokyo wall time as epoch seconds."""
    return datetime(*parts, tzinfo=TOKYO).timestamp()  # type: ignore[misc]


@pytest.mark.parametrize(
    ("when", "said"),
    [
        (at(2026, 11, 28, 14, 5), "14:05"),
        (at(2026, 11, 27, 18, 4), "yesterday 18:04"),
        (at(2026, 11, 29, 9, 0), "tomorrow 09:00"),
        (at(2026, 11, 30, 14, 5), "Mon 30 Nov 14:05"),
        (at(2027, 1, 2, 14, 5), "2 Jan 2027 14:05"),
    ],
)
def test_a_time_is_said_in_the_owners_zone_with_a_date_when_not_today(
    when: float, said: str
) -> None:
    assert spoken_time(when, TOKYO, NOW) == said


def test_the_day_is_the_owners_day_not_utcs() -> None:
    # 08:30 on the 28th in Tokyo is still the 27th in UTC: it is "today" for the owner.
    assert spoken_time(at(2026, 11, 28, 8, 30), TOKYO, NOW) == "08:30"
    assert spoken_time(at(2026, 11, 28, 8, 30), ZoneInfo("UTC"), NOW) == "yesterday 23:30"


@pytest.mark.parametrize(
    ("offset", "said"),
    [
        (25 * 60, "in 25 min"),
        (130 * 60, "in 2 h 10 min"),
        (5 * 3600, "in 5 h"),
        (24 * 3600, "in 1 day"),
        (24 * 3600 - 50, "in 1 day"),  # a day's window seen a moment later
        (3 * 86400 + 7200, "in 3 days"),
        (-5 * 60, "5 min ago"),
        (20, "just now"),
    ],
)
def test_how_far_off_is_said_in_words(offset: float, said: str) -> None:
    assert time_left(NOW + offset, NOW) == said


def test_an_undo_window_of_a_day_reads_as_tomorrow_not_as_passed() -> None:
    """The issue's "Undo until 20:04 UTC" at 20:04 read as expired: a day ahead says so."""
    owner = OwnerView("Asia/Tokyo", now=lambda: NOW)
    assert owner.until(NOW + 86400) == "tomorrow 10:00 (in 1 day)"


def test_the_zone_chosen_in_onboarding_wins_and_the_name_replaces_the_id() -> None:
    chosen: dict[str, str | None] = {"zone": None, "name": None}
    owner = OwnerView("UTC", now=lambda: NOW)
    owner.follow(zone=lambda: chosen["zone"], name=lambda: chosen["name"])
    assert (owner.when(NOW), owner.who("1001")) == ("01:00", "1001")
    chosen.update(zone="Asia/Tokyo", name="Ada")
    assert (owner.when(NOW), owner.who("1001")) == ("10:00", "Ada")


def test_ledger_times_are_read_as_utc_and_anything_else_is_kept() -> None:
    owner = OwnerView("Asia/Tokyo", now=lambda: NOW)
    assert owner.when_stamp("2026-11-28T01:00:00.000000Z") == "10:00"
    assert owner.when_stamp("2026-11-28T01:00:00") == "10:00"
    assert parse_iso("not a time") is None
    assert owner.when_stamp("not a time") == "not a time"


def test_the_machine_zone_comes_from_tz(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert machine_zone() == "Asia/Tokyo"
    monkeypatch.setenv("TZ", ":Europe/Berlin")
    assert machine_zone() == "Europe/Berlin"
    monkeypatch.setenv("TZ", "Mars/Olympus")  # no such zone: /etc/localtime, else UTC
    assert machine_zone() != "Mars/Olympus"
