"""5-field crontab lines, read the way cron reads them."""

from __future__ import annotations

from apscheduler.triggers.cron import CronTrigger

DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")


def crontab_trigger(expression: str, zone: str) -> CronTrigger:
    """A 5-field crontab line read as cron reads it. APScheduler 3's from_crontab numbers the
    days of the week from Monday=0, so "1-5" would mean Tuesday to Saturday: numbers are
    turned into day names first (0 and 7 are Sunday, as in cron)."""
    fields = expression.split()
    if len(fields) != 5:
        raise ValueError(f"expected 5 fields, got {len(fields)}")
    minute, hour, day, month, weekday = fields
    return CronTrigger(
        minute=minute,
        hour=hour,
        day=day,
        month=month,
        day_of_week=",".join(_weekday_part(part) for part in weekday.split(",")),
        timezone=zone,
    )


def _weekday_part(part: str) -> str:
    body, slash, step = part.partition("/")
    if body == "*":
        if not slash:
            return part
        body = "0-6"  # cron counts */2 from Sunday
    first, dash, last = body.partition("-")
    if not first.isdigit() or (dash and not last.isdigit()):
        return part  # names (mon-fri) mean the same to both
    start, end = int(first), int(last) if dash else None
    if start > 7 or (end is not None and end > 7):
        raise ValueError(f"day of week {part!r} out of range 0-7")
    if end is None:
        return DAYS[start]
    if slash:
        return ",".join(DAYS[d] for d in range(start, end + 1, int(step or 1)))
    if start == 0:  # Sunday first: Sunday, then Monday onwards
        return "sun" if end == 0 else f"sun,mon-{DAYS[end]}"
    return f"{DAYS[start]}-{DAYS[end]}"
