"""Query cues for hybrid recall: what a question says about the memories that answer it, read from words alone
(no model, no gold labels). Pure functions.

Three kinds of question carry a cue the fused vector + keyword score misses:
- **whose**: a question about someone ("What did Melanie paint?") is answered by what that someone said. A
  memory that begins `Name: ...` (an utterance, its speaker first) is that speaker's; the question's subject is
  the first known speaker it names, unless two are joined ("Jon and Gina", a joint subject: no single focus).
- **when**: "When did ...?", "How long ago ...?" is answered by a memory that says when (yesterday, last week, on
  Friday, in May, 2023, three days ago).
- **a date**: "What did Maria do in December 2023?", "... on October 13, 2023?" names days; with a calendar (the
  date of sim day 0) they become sim days, and memories of those days (or the week after: "yesterday" is said
  the day after) are the ones meant.
- **a trait**: "Would Caroline enjoy ...?", "Is Melanie likely to ...?" (a hypothetical: would, could, might,
  likely) asks for a person's tastes and aims,
  answered by first-person statements of them ("I love...", "my favourite...", "I'm keen on...").

Each cue multiplies the matching memories' scores by `1 + weight` (`CueWeights`): whose after neighbour context
(a speaker's turn keeps the focus, not the other speaker's reply next to it), the others before it (a dated or
trait statement lends its boost to its neighbours, as its words do). Weights were set on two LoCoMo conversations
(conv-26, conv-30) and are measured on the eight others (docs/recall-quality.md).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import date

_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
MONTH_NUMBERS = {name: number for number, name in enumerate(_MONTHS.split("|"), start=1)}

_TIMED = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|recently|lately|the other (day|night|week)"
    r"|(last|this|next|past|previous) (night|morning|evening|week|weekend|month|year|summer|winter|spring|fall"
    rf"|autumn|{_WEEKDAYS})"
    r"|(a|an|one|two|three|four|five|six|few|couple of|couple|several) (days?|weeks?|months?|years?) ago|ago"
    rf"|(on|last|this) ({_WEEKDAYS})|(in|since|during|last|this) ({_MONTHS})|(19|20)\d\d|since"
    r"|just (got|finished|started|went))\b",
    re.IGNORECASE,
)
# A trait statement: "i", "i'm", "i am", "i've" or "my", then within 40 characters (no line break) a word of taste
# or aim. Searched as two short patterns (the first-person word, then the nearest taste word after it): the one
# pattern `\b(i|i'm|i am|i've|my)\b.{0,40}\b(love|...)\b` says the same and took ~10x longer a memory.
_FIRST_PERSON = re.compile(r"\b(?:i'm|i am|i've|i|my)\b", re.IGNORECASE)
_TASTE = re.compile(
    r"\b(?:love|loves|like|likes|enjoy|enjoys|fan of|favou?rite|passion|passionate|into|keen|dream|hope|want|value"
    r"|believe|prefer|always|never|hate|afraid|goal)\b",
    re.IGNORECASE,
)
TRAIT_REACH = 40
# A hypothetical about a person ("Would Caroline enjoy...?", "...likely to..."), not any yes/no question: "Does
# Agnes like Rose?" asks for an opinion of someone, which first-person tastes do not answer
_ASKS_TRAIT = re.compile(r"(would|could|might|what might|what would)\b", re.IGNORECASE)
_SPEAKER = re.compile(r"([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}):\s")
_WORD = re.compile(r"[A-Za-z']+")
_DATE = re.compile(
    rf"\b(?:(\d{{1,2}})\s+)?({_MONTHS})(?:\s+(\d{{1,2}})(?:st|nd|rd|th)?)?,?\s*((?:19|20)\d\d)\b", re.IGNORECASE
)
_JOINS = frozenset({"and", "or", "&"})


@dataclass(frozen=True, slots=True)
class MemoryCues:
    """What a memory's own text says: `subject`, the lower-cased first name of its leading `Name:` speaker ("" when
    it has none); `timed`, it says when; `trait`, it is a first-person statement of a taste or aim."""

    subject: str
    timed: bool
    trait: bool


@dataclass(frozen=True, slots=True)
class QueryCues:
    """What a question asks for: `subject`, the one speaker it is about (lower-cased first name, "" for none);
    `asks_when`, a time; `asks_trait`, a person's tastes or aims; `days`, the sim days (first, last) a date in it
    names, None without a date or a calendar."""

    subject: str = ""
    asks_when: bool = False
    asks_trait: bool = False
    days: tuple[int, int] | None = None

    @property
    def any(self) -> bool:
        return bool(self.subject or self.asks_when or self.asks_trait or self.days)


@dataclass(frozen=True, slots=True)
class CueWeights:
    """Each cue multiplies the matching memories' scores by 1 + its weight; a named date covers the memories of
    `date_before_days` before its first day to `date_after_days` after its last."""

    subject: float = 1.0
    when: float = 1.0
    date: float = 1.0
    trait: float = 1.0
    date_before_days: int = 1
    date_after_days: int = 7


# Every match of _TIMED holds one of these as a whole word (or a year), every trait statement "i" or "my" and a
# taste word: a memory whose words miss them is decided without the long patterns (most memories, ~5x faster)
_TIME_WORDS = frozenset(
    "yesterday today tonight tomorrow recently lately ago since day days night week weeks weekend month months year"
    f" years morning evening summer winter spring fall autumn got finished started went {_WEEKDAYS} {_MONTHS}"
    .replace("|", " ").split()
)
_TASTE_WORDS = frozenset("love loves like likes enjoy enjoys fan favorite favourite passion passionate into keen dream"
                         " hope want value believe prefer always never hate afraid goal".split())
_TOKEN = re.compile(r"[a-z0-9]+")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


def memory_cues(text: str) -> MemoryCues:
    speaker = _SPEAKER.match(text)
    subject = speaker.group(1).split()[0].lower() if speaker else ""
    words = set(_TOKEN.findall(text.lower()))
    timed = bool(words & _TIME_WORDS or _YEAR.search(text)) and bool(_TIMED.search(text))
    trait = bool(words & _TASTE_WORDS) and bool(words & {"i", "my"}) and states_a_trait(text)
    return MemoryCues(subject, timed, trait)


def states_a_trait(text: str) -> bool:
    """A first-person word followed within TRAIT_REACH characters (no line break) by a word of taste or aim."""
    for first in _FIRST_PERSON.finditer(text):
        # "i'm" may count from its "i" as well (the reach then starts 2 characters earlier)
        shortest = first.start() + (2 if first.group().lower() == "my" else 1)
        for end in {shortest, first.end()}:
            taste = _TASTE.search(text, end)
            if taste and taste.start() - end <= TRAIT_REACH and "\n" not in text[end : taste.start()]:
                return True
    return False


def asks_when(query: str) -> bool:
    text = query.lower().strip()
    return (text.startswith(("when", "how long")) or " when " in f" {text} " or "what year" in text
            or "what month" in text)


def asks_trait(query: str) -> bool:
    text = query.strip()
    return bool(_ASKS_TRAIT.match(text)) or "likely" in text.lower()


def query_subject(query: str, subjects: Collection[str]) -> str:
    """The one known subject the query is about: the first it names ("Melanie's" names Melanie), unless it is
    joined to the next one named ("Jon and Gina": "")."""
    words = [w.lower().removesuffix("'s").rstrip("'") for w in _WORD.findall(query)]
    hits = [(i, w) for i, w in enumerate(words) if w in subjects]
    if not hits:
        return ""
    first_at, first = hits[0]
    other = next((i for i, w in hits if w != first), None)
    if other is not None and other == first_at + 2 and words[first_at + 1] in _JOINS:
        return ""
    return first


def named_dates(query: str) -> tuple[date, date] | None:
    """The first calendar date or month with its year in the query ("October 13, 2023", "13 October 2023", "in
    December 2023"): its first and last day; None when there is none (a month without a year is not resolved)."""
    match = _DATE.search(query)
    if match is None:
        return None
    month, year = MONTH_NUMBERS[match.group(2).lower()], int(match.group(4))
    day = match.group(1) or match.group(3)
    try:
        if day:
            one = date(year, month, int(day))
            return one, one
        return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
    except ValueError:  # "February 30, 2023"
        return None


def query_cues(query: str, subjects: Collection[str], day_zero: date | None) -> QueryCues:
    """The cues of a query against the subjects an NPC's memories have and its calendar (None: no dates)."""
    dates = named_dates(query) if day_zero is not None else None
    days = None if dates is None or day_zero is None else ((dates[0] - day_zero).days, (dates[1] - day_zero).days)
    return QueryCues(query_subject(query, subjects), asks_when(query), asks_trait(query), days)


def before_factor(cues: QueryCues, memory: MemoryCues, day: int, weights: CueWeights) -> float:
    """The multiplier of a memory's fused score before neighbour context: when, trait and date cues."""
    factor = 1.0
    if cues.asks_when:
        factor *= 1.0 + weights.when * memory.timed
    if cues.asks_trait:
        factor *= 1.0 + weights.trait * memory.trait
    if cues.days is not None:
        first, last = cues.days[0] - weights.date_before_days, cues.days[1] + weights.date_after_days
        factor *= 1.0 + weights.date * (first <= day <= last)
    return factor


def after_factor(cues: QueryCues, memory: MemoryCues, weights: CueWeights) -> float:
    """The multiplier of a memory's score after neighbour context: the question's subject is its speaker."""
    return 1.0 + weights.subject * bool(cues.subject and memory.subject == cues.subject)
