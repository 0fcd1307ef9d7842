"""Dates and the sim's world time, and the relative times a query names ("yesterday", "last week").

Agent Memory stamps messages with calendar dates; the NPC memory underneath counts whole sim days and hours
(`WorldTime`). A date maps to the world time `epoch` days before it (the default epoch, 2000-01-01 UTC, is day 0),
so `recall`'s `referenceDate` becomes the `now` the memory system reads time from.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from memory_sim.memory.models import WorldTime

DEFAULT_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six|seven|ten) (day|week|month)s? ago\b")
_COUNT = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10}

Window = tuple[datetime, datetime]  # [start, end): what a relative time in a query covers


def world_time(moment: datetime, epoch: datetime = DEFAULT_EPOCH) -> WorldTime:
    """The world time of a date: whole days since `epoch` and the hour (UTC); a date before the epoch is day 0."""
    elapsed = moment.astimezone(UTC) - epoch
    if elapsed.total_seconds() < 0:
        return WorldTime(0, 0)
    return WorldTime(elapsed.days, int(elapsed.seconds // 3600))


def world_seconds(moment: datetime, epoch: datetime = DEFAULT_EPOCH) -> float:
    """Seconds of world time at `moment`: what the memory system's clock returns then."""
    return max(0.0, (moment.astimezone(UTC) - epoch).total_seconds())


def _day(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(moment: datetime, back: int = 0) -> datetime:
    year, month = moment.year, moment.month - back
    while month < 1:
        year, month = year - 1, month + 12
    return datetime(year, month, 1, tzinfo=UTC)


def anchored(text: str, said_at: datetime) -> datetime:
    """When an event a sentence tells happened: the day its words name, counted from when it was said ("We
    shipped it yesterday", said on 3 March: 2 March), when they name one day; else when it was said."""
    window = relative_window(text, said_at)
    if window is None or window[1] - window[0] > timedelta(days=1):
        return said_at
    return window[0]


def relative_window(query: str, now: datetime) -> Window | None:
    """The span of time a query's relative words name, counted back from `now`; None when it names none.
    "today", "yesterday", "this week", "last week" (the 7 days before this week's Monday), "this month", "last
    month", "N days/weeks/months ago", "last <weekday>", "recently" (the last 30 days)."""
    text = query.lower()
    today = _day(now)
    monday = today - timedelta(days=today.weekday())
    if "yesterday" in text:
        return today - timedelta(days=1), today
    if "today" in text or "this morning" in text:
        return today, today + timedelta(days=1)
    if "last week" in text or "past week" in text:
        return monday - timedelta(days=7), monday
    if "this week" in text:
        return monday, monday + timedelta(days=7)
    if "last month" in text or "past month" in text:
        return _month_start(today, 1), _month_start(today)
    if "this month" in text:
        return _month_start(today), today + timedelta(days=1)
    found = _AGO.search(text)
    if found:
        count = int(found.group(1)) if found.group(1).isdigit() else _COUNT[found.group(1)]
        unit = {"day": 1, "week": 7, "month": 30}[found.group(2)]
        start = today - timedelta(days=count * unit)
        return start, start + timedelta(days=unit)
    for number, name in enumerate(WEEKDAYS):
        if f"last {name}" in text or f"on {name}" in text:
            back = (today.weekday() - number) % 7 or 7
            start = today - timedelta(days=back)
            return start, start + timedelta(days=1)
    if "recently" in text or "recent" in text or "lately" in text:
        return today - timedelta(days=30), now + timedelta(seconds=1)
    return None
