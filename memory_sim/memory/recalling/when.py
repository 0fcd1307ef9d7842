"""What a question says about time, read against the sim clock: pure, no model.

    resolve_time("What did she do yesterday?", WorldTime(15, 10))
    -> TimeFocus(topic="What did she do?", span=DaySpan(14, 14))

Three kinds of focus, each optional (a question may have none, and then recall ranks as before):
- **span**: sim days, and hours of those days: "today", "this morning", "yesterday (evening)", "last night", "the
  day before yesterday", "three days ago", "a couple of days ago", "a week ago", "last week", "the past few days",
  "day 12", "the morning of day 9", "day 14 in the afternoon", "between day 3 and day 5", "before/after/since day
  7"; with a calendar (the date of sim day 0): "April 8", "9 April 2026", "the 3rd of May", "in May 2026", "on
  Monday", "last Thursday evening".
- **anchor**: a named event the answer is placed against: "after I came back from the fair", "just before the
  stranger threatened me", "since Ewan went home". Which memory that event is, is for recall to find by meaning
  (memory/recalling/timing.py); here it is its words and the relation.
- **ordinal**: "the last time", "most recently", "did I last ...", "the first time", "did ... first": the newest (or
  oldest) memory of the matter.

`topic` is the question with its time words taken out, for matching by meaning: "yesterday" in a query pulls
towards memories that say "yesterday", which is not what the question asks. An event's clause stays in it: people
often say the event and what followed in one breath ("after the accident I saw what family means"), and which
memories lie before or after it is for the time boost to say.
Future words ("tonight", "tomorrow", "next Monday") are not resolved: a decision's "Shall I go tonight?" asks
for what is known now.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Literal

from memory_sim.memory.models import WorldTime
from memory_sim.memory.recalling.cues import MONTH_NUMBERS

Relation = Literal["before", "after", "since"]
Ordinal = Literal["last", "first"]

# Hours (first, last, inclusive) each part of a day names
PARTS: dict[str, tuple[int, int]] = {
    "morning": (5, 11), "afternoon": (12, 16), "evening": (17, 23), "night": (19, 23),
}
_PART = "morning|afternoon|evening|night"
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "twenty": 20, "couple": 2, "a couple of": 2, "couple of": 2,
}
_FEW = {"few": (2, 4), "a few": (2, 4), "several": (3, 6)}  # vague counts: a range of days
_COUNT = r"\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|twenty" \
         r"|a couple of|couple of|a few|few|several"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = "|".join(MONTH_NUMBERS)
_ORDINAL_SUFFIX = r"(?:st|nd|rd|th)?"


@dataclass(frozen=True, slots=True)
class DaySpan:
    """Sim days `first`..`last` (inclusive); `hours`, the hours of those days meant (inclusive), None for whole
    days; `slack`, days either side that count as near (ranked after the span, before the rest)."""

    first: int
    last: int
    hours: tuple[int, int] | None = None
    slack: int = 1

    def holds(self, day: int, hour: int) -> bool:
        return self.first <= day <= self.last and (self.hours is None or self.hours[0] <= hour <= self.hours[1])


@dataclass(frozen=True, slots=True)
class EventAnchor:
    """A named event (`event`, its words) and whether the answer lies `before`, `after` or `since` it."""

    relation: Relation
    event: str


@dataclass(frozen=True, slots=True)
class TimeFocus:
    """What a question asks about time (module docstring); `topic`, the question without its time words."""

    topic: str
    span: DaySpan | None = None
    anchor: EventAnchor | None = None
    ordinal: Ordinal | None = None

    @property
    def any(self) -> bool:
        return self.span is not None or self.anchor is not None or self.ordinal is not None


SpanRule = Callable[[re.Match[str], WorldTime, date | None], DaySpan | None]


def _hours(part: str | None) -> tuple[int, int] | None:
    return PARTS[part.lower()] if part else None


def _day(now: WorldTime, back: int, part: str | None = None) -> DaySpan | None:
    day = now.day - back
    return DaySpan(day, day, _hours(part)) if day >= 0 else None


def _clipped(first: int, last: int, now: WorldTime, hours: tuple[int, int] | None = None,
             slack: int = 1) -> DaySpan | None:
    first, last = max(0, first), min(now.day, last)
    return DaySpan(first, last, hours, slack) if first <= last else None


def _count(word: str) -> tuple[int, int]:
    word = word.lower()
    if word in _FEW:
        return _FEW[word]
    value = int(word) if word.isdigit() else _NUMBERS[word]
    return value, value


def _ago(match: re.Match[str], now: WorldTime, _: date | None) -> DaySpan | None:
    low, high = _count(match["n"])
    days = 7 if match["unit"].lower().startswith("week") else 1
    if days == 7:  # "a week ago" is loose: the day a week back, two days either side near it
        return _clipped(now.day - high * 7, now.day - low * 7, now, slack=2)
    return _clipped(now.day - high, now.day - low, now)


def _past(match: re.Match[str], now: WorldTime, _: date | None) -> DaySpan | None:
    """"the past few days", "the last 3 days", "over the past week": up to and including today."""
    low, high = _count(match["n"]) if match["n"] else (1, 1)
    days = {"day": 1, "week": 7, "month": 30}[match["unit"].lower().rstrip("s")]
    return _clipped(now.day - high * days, now.day, now, slack=0)


def _last_unit(match: re.Match[str], now: WorldTime, day_zero: date | None) -> DaySpan | None:
    """"last week" (the seven days before today), "this week" (since Monday, with a calendar; else six days back),
    "last month"."""
    which, unit = match["which"].lower(), match["unit"].lower()
    if unit == "month":
        return _clipped(now.day - 30, now.day - (which != "this"), now, slack=0)
    if which == "this":
        back = (day_zero + timedelta(days=now.day)).weekday() if day_zero is not None else 6
        return _clipped(now.day - back, now.day, now, slack=0)
    return _clipped(now.day - 7, now.day - 1, now, slack=0)


def _numbered_day(match: re.Match[str], now: WorldTime, _: date | None) -> DaySpan | None:
    day = int(match["d"])
    return DaySpan(day, day, _hours(match["part"] or match["part2"]))


def _day_range(match: re.Match[str], now: WorldTime, _: date | None) -> DaySpan | None:
    first, last = sorted((int(match["a"]), int(match["b"])))
    return DaySpan(first, last)


def _day_bound(match: re.Match[str], now: WorldTime, _: date | None) -> DaySpan | None:
    day, relation = int(match["d"]), match["rel"].lower()
    if relation == "before":
        return _clipped(0, day - 1, now, slack=0)
    return _clipped(day + (relation == "after"), now.day, now, slack=0)


def _on_date(day_zero: date, when: date, now: WorldTime, part: str | None = None) -> DaySpan | None:
    day = (when - day_zero).days
    return DaySpan(day, day, _hours(part)) if day >= 0 else None


def _latest(day_zero: date, now: WorldTime, month: int, day: int | None) -> date | None:
    """The date of that month (and day) in the latest year that puts it on or before today."""
    today = day_zero + timedelta(days=now.day)
    for year in (today.year, today.year - 1):
        try:
            found = date(year, month, day or 1)
        except ValueError:
            return None
        if found <= today:
            return found
    return None


def _calendar_date(match: re.Match[str], now: WorldTime, day_zero: date | None) -> DaySpan | None:
    if day_zero is None:
        return None
    month = MONTH_NUMBERS[(match["m1"] or match["m2"]).lower()]
    day = int(match["d1"] or match["d2"])
    year = match["y1"] or match["y2"]
    try:
        when = date(int(year), month, day) if year else _latest(day_zero, now, month, day)
    except ValueError:
        return None
    return None if when is None else _on_date(day_zero, when, now, match["part"])


def _calendar_month(match: re.Match[str], now: WorldTime, day_zero: date | None) -> DaySpan | None:
    if day_zero is None:
        return None
    month = MONTH_NUMBERS[match["m"].lower()]
    first = date(int(match["y"]), month, 1) if match["y"] else _latest(day_zero, now, month, None)
    if first is None:
        return None
    last = (first.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
    return _clipped((first - day_zero).days, (last - day_zero).days, now, slack=7)


def _weekday(match: re.Match[str], now: WorldTime, day_zero: date | None) -> DaySpan | None:
    """The latest such weekday before today."""
    if day_zero is None:
        return None
    today = (day_zero + timedelta(days=now.day)).weekday()
    back = (today - _WEEKDAYS.index(match["wd"].lower())) % 7 or 7
    return _day(now, back, match["part"])


_SPAN_RULES: tuple[tuple[re.Pattern[str], SpanRule], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), rule)
    for pattern, rule in (
        (r"\b(?:on )?the day before yesterday\b", lambda m, now, _: _day(now, 2)),
        (rf"\byesterday(?: (?:in the )?(?P<part>{_PART}))?\b", lambda m, now, _: _day(now, 1, m["part"])),
        (r"\blast night\b", lambda m, now, _: _day(now, 1, "night")),
        (r"\b(?:earlier )?this (?P<part>morning|afternoon|evening)\b", lambda m, now, _: _day(now, 0, m["part"])),
        (r"\b(?:earlier |so far )?today\b", lambda m, now, _: _day(now, 0)),
        (rf"\b(?P<n>{_COUNT}) (?P<unit>days?|weeks?) (?:ago|back|earlier)\b", _ago),
        (rf"\b(?:(?:in|over|during|for) )?the (?:past|last|previous) (?:(?P<n>{_COUNT}) )?(?P<unit>days?|weeks?"
         r"|months?)\b(?! of\b)", _past),
        (r"\b(?:(?:in|during|over) )?(?P<which>last|this|the previous) (?P<unit>week|month)\b(?! of\b)", _last_unit),
        (r"\b(?:between|from) days? (?P<a>\d+) (?:and|to|until) (?:day )?(?P<b>\d+)\b", _day_range),
        (r"\b(?P<rel>before|after|since) day (?P<d>\d+)\b", _day_bound),
        (rf"\b(?:(?:on|in|during) )?(?:the (?P<part>{_PART}) of )?day (?P<d>\d+)"
         rf"(?:,? (?:in the )?(?P<part2>{_PART}))?\b", _numbered_day),
        (rf"\b(?:on |by )?(?:the (?P<part>{_PART}) of )?(?:(?P<m1>{_MONTHS}) (?P<d1>\d{{1,2}}){_ORDINAL_SUFFIX}(?:,? "
         rf"(?P<y1>(?:19|20)\d\d))?|(?:the )?(?P<d2>\d{{1,2}}){_ORDINAL_SUFFIX} (?:of )?(?P<m2>{_MONTHS})(?:,? "
         rf"(?P<y2>(?:19|20)\d\d))?)\b", _calendar_date),
        (rf"\b(?:on |last |this past )(?P<wd>{'|'.join(_WEEKDAYS)})(?: (?P<part>{_PART}))?\b", _weekday),
    )
)
# Today's words in a question that opens by looking ahead name when the plan is, not which memories to read
_SAME_DAY = frozenset(pattern for pattern, _ in _SPAN_RULES[3:5])
_LOOKS_AHEAD = re.compile(r"\s*(?:shall|should|will|can|could|may|must) (?:i|we)\b|\s*is it (?:safe|wise|worth)\b",
                          re.IGNORECASE)
# "in May 2026" (a month with its year) needs no capital; a month alone does ("in may" is not a date)
_MONTH_YEAR = re.compile(rf"\b(?:in|during|since|of) (?P<m>{_MONTHS}) (?P<y>(?:19|20)\d\d)\b", re.IGNORECASE)
_MONTH_ALONE = re.compile(rf"\b(?:in|during) (?P<m>{'|'.join(m.title() for m in MONTH_NUMBERS)})(?P<y>)\b")

_ANCHOR = re.compile(
    r"\b(?:(?:just|right|shortly|soon|not long|straight|ever) )?(?P<rel>before|after|since)\s+(?P<event>[^?.!,;]+)",
    re.IGNORECASE,
)
_NOT_EVENTS = frozenset({"that", "then", "this", "it", "which", "now", "ever", "long", "all"})
_ORDINAL_PATTERNS: tuple[tuple[str, Ordinal], ...] = (
        (r"\b(?:the |that )?last time\b", "last"),
        (r"\bmost recent(?:ly)?\b|\blatest\b", "last"),
        (r"\b(?:for )?the first time\b", "first"),
        (r"\bearliest\b", "first"),
        (r"(?<=\bthe )first\b(?= (?:thing|one|person|place)\b)", "first"),
)
_ORDINALS = tuple((re.compile(pattern, re.IGNORECASE), ordinal) for pattern, ordinal in _ORDINAL_PATTERNS)
# "did I last buy", "did the cellar first flood": the adverb after the subject
_ADVERB = re.compile(r"\b(?:did|has|have|had|was|were)\s+(?:[\w']+\s+){1,3}?(?P<word>last|first)\b"
                     r"(?! (?:week|weekend|month|year|night|day|time|one|of)\b)", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
_DANGLING = re.compile(r"\s+(?:on|in|at|during|of|from|over|the|just|right)\s*(?=[?.!]?$)", re.IGNORECASE)


def resolve_time(question: str, now: WorldTime, day_zero: date | None = None) -> TimeFocus:
    """The question's time focus against `now` (the asker's moment) and the calendar date of sim day 0 (None:
    no calendar dates or weekdays). A question with no time words gives a focus whose `any` is False."""
    text, span = _take_span(question, now, day_zero)
    text, anchor = _take_anchor(text)
    text, ordinal = _take_ordinal(text)
    focus = TimeFocus(_tidy(text) if (span or anchor or ordinal) else question, span, anchor, ordinal)
    return focus if focus.topic else replace(focus, topic=question)


def _take_span(text: str, now: WorldTime, day_zero: date | None) -> tuple[str, DaySpan | None]:
    ahead = _LOOKS_AHEAD.match(text) is not None
    for pattern, rule in _SPAN_RULES:
        if ahead and pattern in _SAME_DAY:  # "Shall I take the cart to the mill this afternoon?": the plan's time
            continue
        for match in pattern.finditer(text):
            span = rule(match, now, day_zero)
            if span is not None:
                return _cut(text, match), span
    if day_zero is not None:
        for pattern in (_MONTH_YEAR, _MONTH_ALONE):
            month = pattern.search(text)
            if month is not None and (span := _calendar_month(month, now, day_zero)) is not None:
                return _cut(text, month), span
    return text, None


def _take_anchor(text: str) -> tuple[str, EventAnchor | None]:
    match = _ANCHOR.search(text)
    if match is None:
        return text, None
    event = _tidy(match["event"])
    words = event.lower().split()
    if not words or words[0] in _NOT_EVENTS:
        return text, None
    relation: Relation = match["rel"].lower()  # type: ignore[assignment]
    return text, EventAnchor(relation, event)  # the event's words stay: a memory saying both answers too


def _take_ordinal(text: str) -> tuple[str, Ordinal | None]:
    for pattern, ordinal in _ORDINALS:
        match = pattern.search(text)
        if match is not None:
            return _cut(text, match), ordinal
    adverb = _ADVERB.search(text)
    if adverb is not None:
        word: Ordinal = adverb["word"].lower()  # type: ignore[assignment]
        return text[: adverb.start("word")] + text[adverb.end("word") :], word
    return text, None


def _cut(text: str, match: re.Match[str]) -> str:
    return f"{text[: match.start()]} {text[match.end() :]}"


def _tidy(text: str) -> str:
    """Spaces collapsed, a preposition left dangling at the end dropped, no space before the final mark."""
    text = _SPACES.sub(" ", text).strip()
    while (tidier := _DANGLING.sub("", text)) != text:
        text = tidier
    return re.sub(r"\s+([?.!,])", r"\1", text).strip(" ,:;")
