"""When the owner means, read from chat: "in 2 minutes", "at 9pm", "tomorrow at 9:30",
"on 03/04 at 10", "every Monday at 8", "every 2 hours", or a 5-field crontab line.

A small grammar on purpose: a time it cannot place exactly is asked back (`Ambiguous`: "at 9"
is 09:00 or 21:00; 03/04 is the 3rd of April or the 4th of March), never guessed. Times are
read in the owner's timezone; what follows the time is the rest of the request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from core.scheduler.crontab import crontab_trigger


@dataclass(frozen=True, slots=True)
class Once:
    """A single moment (aware, in the owner's zone)."""

    at: datetime


@dataclass(frozen=True, slots=True)
class Every:
    """A repeating schedule as a crontab line, and how to say it."""

    cron: str
    said: str


Schedule = Once | Every


@dataclass(frozen=True, slots=True)
class Ambiguous:
    """Two readings; the owner picks one (label, schedule) each."""

    question: str
    choices: tuple[tuple[str, Schedule], ...]


@dataclass(frozen=True, slots=True)
class Unreadable:
    """Nothing here reads as a time."""

    reason: str


Reading = Schedule | Ambiguous | Unreadable

_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600}
_UNITS |= {"hr": 3600, "hour": 3600, "d": 86400, "day": 86400, "week": 604800}
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_CRON_DAY = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"

_IN = re.compile(r"in\s+(?P<n>\d+|an?|half\s+an)\s+(?P<unit>[a-z]+?)s?\b")
_CLOCK = re.compile(
    r"(?:at\s+)?(?P<h>\d{1,2})(?:[:.h](?P<m>\d{2}))?\s*(?P<ap>am|pm|a\.m\.|p\.m\.)?"
    r"(?P<part>\s+(?:in\s+the\s+(?:morning|afternoon|evening)|tonight|this\s+"
    r"(?:morning|afternoon|evening)))?(?![\d/:])"
)
_NAMED_TIME = re.compile(r"(?:at\s+)?(?P<word>noon|midday|midnight)\b")
_ISO = re.compile(r"(?:on\s+)?(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})(?:[t\s]+|\b)")
_SLASH = re.compile(r"(?:on\s+)?(?P<a>\d{1,2})/(?P<b>\d{1,2})(?:/(?P<y>\d{2,4}))?\b\s*")
_DAY_MONTH = re.compile(r"(?:on\s+)?(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH + r"\s*")
_MONTH_DAY = re.compile(r"(?:on\s+)?" + _MONTH + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?\b\s*")
_RELDAY = re.compile(r"(?P<rel>today|tonight|tomorrow)\b\s*")
_DAY_WORD = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?"
_WEEKDAY = re.compile(r"(?:on\s+|next\s+)?(?P<wd>" + _DAY_WORD + r")\b\s*")
_EVERY_N = re.compile(r"every\s+(?P<n>\d+\s+)?(?P<unit>minute|min|hour)s?\b\s*")
_EVERY_DAYS = re.compile(
    r"every\s+(?P<days>day|morning|evening|weekday|weekend|"
    r"(?:" + _DAY_WORD + r"s?(?:\s*(?:,|and)\s*)?)+)"
    r"\b\s*"
)
_CRON_LINE = re.compile(r"(?P<line>(?:\S+\s+){4}\S+)\s*")


def read_when(text: str, now: datetime) -> tuple[Reading, str]:
    """Read a schedule from the start of `text` (`now`: aware, in the owner's zone); returns
    what was read and the rest of the text (a leading "to" dropped)."""
    lowered = text.strip().lower()
    for reader in (_read_cron, _read_every, _read_in, _read_moment):
        found = reader(lowered, now)
        if found is not None:
            reading, used = found
            rest = text.strip()[used:].strip(" ,:")
            return reading, re.sub(r"^(?:to|that)\s+", "", rest, flags=re.IGNORECASE)
    return Unreadable("I could not read a time there"), text.strip()


def _read_cron(text: str, now: datetime) -> tuple[Reading, int] | None:
    match = _CRON_LINE.match(text)
    if match is None or not re.match(r"[\d*]", text):
        return None
    try:
        crontab_trigger(match["line"], "UTC")
    except (ValueError, TypeError):
        return None
    return Every(match["line"], f"cron {match['line']}"), match.end()


def _read_in(text: str, now: datetime) -> tuple[Reading, int] | None:
    match = _IN.match(text)
    if match is None or match["unit"] not in _UNITS:
        return None
    count = match["n"]
    amount = 0.5 if count.startswith("half") else 1.0 if count in ("a", "an") else float(count)
    return Once(now + timedelta(seconds=amount * _UNITS[match["unit"]])), match.end()


def _read_every(text: str, now: datetime) -> tuple[Reading, int] | None:
    match = _EVERY_N.match(text)
    if match is not None:
        n = int(match["n"] or 1)
        unit = "minute" if match["unit"].startswith("min") else "hour"
        if n < 1 or n > (59 if unit == "minute" else 23):
            return Unreadable(f"every {n} {unit}s does not fit a day's clock"), match.end()
        cron = f"*/{n} * * * *" if unit == "minute" else f"0 */{n} * * *"
        return Every(cron, f"every {n} {unit}s" if n > 1 else f"every {unit}"), match.end()
    match = _EVERY_DAYS.match(text)
    if match is None:
        return None
    days, said = _days(match["days"])
    clock = _read_clock(text[match.end() :].lstrip())
    if clock is None:
        return Unreadable("say at what time, e.g. 'every Monday at 08:00'"), match.end()
    readings, used = clock
    skipped = len(text[match.end() :]) - len(text[match.end() :].lstrip())
    end = match.end() + skipped + used
    choices = tuple(
        (
            f"{said} at {at:%H:%M}",
            Every(f"{at.minute} {at.hour} * * {days}", f"{said} at {at:%H:%M}"),
        )
        for at in readings
    )
    return _one_or_ask(choices), end


def _days(words: str) -> tuple[str, str]:
    if words in ("day", "morning", "evening"):
        return "*", "every day"
    if words == "weekday":
        return "mon-fri", "every weekday"
    if words == "weekend":
        return "sat,sun", "every weekend day"
    found = [i for i, d in enumerate(_DAYS) for w in re.findall(r"[a-z]+", words) if w[:3] == d[:3]]
    ordered = sorted(set(found))
    return ",".join(_CRON_DAY[i] for i in ordered), "every " + " and ".join(
        _DAYS[i].title() for i in ordered
    )


def _read_clock(text: str) -> tuple[tuple[time, ...], int] | None:
    """One time (or two readings of an unmarked 1-11 o'clock) and the characters used."""
    named = _NAMED_TIME.match(text)
    if named is not None:
        return (time(0, 0) if named["word"] == "midnight" else time(12, 0),), named.end()
    match = _CLOCK.match(text)
    if match is None or (not text.startswith("at") and match["m"] is None and not match["ap"]):
        return None
    hour, minute = int(match["h"]), int(match["m"] or 0)
    if hour > 23 or minute > 59 or (match["ap"] and not 1 <= hour <= 12):
        return None
    part = (match["ap"] or match["part"] or "").replace(".", "")
    if part:
        evening = part.startswith("p") or any(w in part for w in ("afternoon", "evening", "night"))
        hour = hour % 12 + (12 if evening else 0)
        return (time(hour, minute),), match.end()
    if 1 <= hour <= 11 and not match["h"].startswith("0"):
        return (time(hour, minute), time(hour + 12, minute)), match.end()
    return (time(hour, minute),), match.end()


def _read_day(text: str, now: datetime) -> tuple[tuple[date, ...], int, bool] | None:
    """A day (or two readings of 03/04), the characters used, and whether it was named."""
    today = now.date()
    if match := _RELDAY.match(text):
        return (today + timedelta(days=match["rel"] == "tomorrow"),), match.end(), True
    if match := _ISO.match(text):
        return _dates([(int(match["y"]), int(match["mo"]), int(match["d"]))]), match.end(), True
    if match := _SLASH.match(text):
        year = int(match["y"]) if match["y"] else today.year
        year += 2000 if year < 100 else 0
        a, b = int(match["a"]), int(match["b"])
        dates = _dates([(year, b, a), (year, a, b)] if a != b else [(year, a, b)])
        return _next_year(dates, today, bool(match["y"])), match.end(), True
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        if match := pattern.match(text):
            month = _MONTHS.index(match["mon"]) + 1
            dates = _dates([(today.year, month, int(match["d"]))])
            return _next_year(dates, today, False), match.end(), True
    if match := _WEEKDAY.match(text):
        wanted = next(i for i, d in enumerate(_DAYS) if match["wd"][:3] == d[:3])
        ahead = (wanted - today.weekday()) % 7 or 7
        return (today + timedelta(days=ahead),), match.end(), True
    return None


def _dates(parts: list[tuple[int, int, int]]) -> tuple[date, ...]:
    found = []
    for year, month, day in parts:
        try:
            found.append(date(year, month, day))
        except ValueError:
            continue
    return tuple(found)


def _next_year(dates: tuple[date, ...], today: date, year_given: bool) -> tuple[date, ...]:
    if year_given:
        return dates
    return tuple(d if d >= today else d.replace(year=d.year + 1) for d in dates)


def _read_moment(text: str, now: datetime) -> tuple[Reading, int] | None:
    """[day] [at] time [day]: a day before or after the time; no day means the next such
    time from now (today, or tomorrow once it has passed)."""
    day = _read_day(text, now)
    used = day[1] if day else 0
    clock = _read_clock(text[used:])
    if clock is None:
        return None if day is None else (Unreadable("say at what time, e.g. 'at 09:30'"), used)
    times, clock_used = clock
    used += clock_used
    if day is None and (after := _read_day(text[used:].lstrip(), now)) is not None:
        used += len(text[used:]) - len(text[used:].lstrip()) + after[1]
        day = after
    if day is not None and not day[0]:
        return Unreadable("that date does not exist"), used
    zone = now.tzinfo
    assert isinstance(zone, ZoneInfo)
    choices: list[tuple[str, Schedule]] = []
    for d in day[0] if day else (now.date(),):
        for t in times:
            at = datetime.combine(d, t, zone)
            if day is None and at <= now:
                at += timedelta(days=1)
            choices.append((say_moment(at, now), Once(at)))
    ahead = sorted((c for c in choices if isinstance(c[1], Once) and c[1].at > now), key=_when)
    return _one_or_ask(tuple(ahead or choices[-1:])), used


def _when(choice: tuple[str, Schedule]) -> float:
    return choice[1].at.timestamp() if isinstance(choice[1], Once) else 0.0


def _one_or_ask(choices: tuple[tuple[str, Schedule], ...]) -> Reading:
    if len(choices) == 1:
        return choices[0][1]
    return Ambiguous(" or ".join(label for label, _ in choices) + "?", choices)


def say_moment(at: datetime, now: datetime) -> str:
    """'Mon 23 Nov 09:00', with the year when it is not this one."""
    return f"{at:%a %d %b %Y %H:%M}" if at.year != now.year else f"{at:%a %d %b %H:%M}"


def zone_now(zone: str, epoch: float) -> datetime:
    """`epoch` as an aware datetime in `zone`."""
    return datetime.fromtimestamp(epoch, ZoneInfo(zone))
