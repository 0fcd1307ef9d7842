"""What one NPC thinks of another, told from its opinion's state key ("opinion:<other>"): the current view first
with the day it began, then how it changed, newest first (pure, no I/O):

    Ada's view of Cole, since day 4: "A trustworthy friend now." Before that (2 earlier views, newest first):
    day 3, "I was wrong about him."; day 1, "I don't trust him."

A view is a stance, not a sentence: consecutive memories that restate one view are told as one, since the first
of them (the memory that turned it, which names why), with how often it was said again. Two memories restate one
view when the game gave both the same state value (`ShortTermMemory.state_value`, e.g. "warm") or say the same
words; no word list decides whether a view is warm or cold, so memories without a value are each a view of their
own. Where there is no view: "Ada has no opinion of Cole yet."
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

QUOTE_WORDS = 24  # a view that turned says why first and how after: "After what Tom did ..., I trust him."
EARLIER_QUOTED = 3  # earlier views quoted one by one; the rest are counted, with their days


@dataclass(frozen=True, slots=True)
class View:
    """One memory under the opinion's key: the sim day it was remembered for, its words and the state value the
    game gave it (None: not known)."""

    day: int
    text: str
    value: str | None = None


@dataclass(frozen=True, slots=True)
class Stance:
    """One view held: the memories that said it, oldest first (the first began it)."""

    said: tuple[View, ...]

    @property
    def since(self) -> int:
        return self.said[0].day

    @property
    def last_day(self) -> int:
        return self.said[-1].day

    @property
    def value(self) -> str | None:
        return self.said[0].value

    def to_json(self) -> dict[str, object]:
        return {"sinceDay": self.since, "lastDay": self.last_day, "text": self.said[0].text, "value": self.value,
                "times": len(self.said)}


def opinion_key(other: str) -> str:
    """The state key of an NPC's opinion of `other` (what keys.infer_key gives an opinion about one NPC)."""
    return f"opinion:{other}"


def _words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[a-z0-9']+", text.lower()))


def restates(newer: View, older: View) -> bool:
    """Whether `newer` says again the view `older` held: the same state value from the game, or the same words."""
    if newer.value is not None and older.value is not None:
        return newer.value == older.value
    return _words(newer.text) == _words(older.text)


def stances(newest_first: Sequence[View]) -> list[Stance]:
    """The views held, newest first: each run of memories that restate one view is one `Stance`."""
    runs: list[list[View]] = []
    for view in reversed(newest_first):
        if runs and restates(view, runs[-1][-1]):
            runs[-1].append(view)
        else:
            runs.append([view])
    return [Stance(tuple(run)) for run in reversed(runs)]


def _quoted(text: str) -> str:
    cut = text.split()
    return '"' + " ".join(cut[:QUOTE_WORDS]) + ("..." if len(cut) > QUOTE_WORDS else "") + '"'


def _days(days: Sequence[int]) -> str:
    first, last = min(days), max(days)
    return f"day {first}" if first == last else f"days {first} to {last}"


def _times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


def _current(owner: str, other: str, now: Stance) -> str:
    told = f"{owner}'s view of {other}, since day {now.since}: {_quoted(now.said[0].text)}"
    again = len(now.said) - 1
    return f"{told} (said again {_times(again)}, last on day {now.last_day})." if again else told


def _earlier(stance: Stance) -> str:
    told = f"day {stance.since}, {_quoted(stance.said[0].text)}"
    n = len(stance.said)
    return f"{told} (said {_times(n)}, {_days([v.day for v in stance.said])})" if n > 1 else told


def opinion_story(owner: str, other: str, newest_first: Sequence[View]) -> str:
    """The current view with the day it began (restatements counted, not listed), then the earlier views newest
    first (the first `EARLIER_QUOTED` quoted with the day each began, the rest counted with their days);
    "<owner> has no opinion of <other> yet." when there is none."""
    if not newest_first:
        return f"{owner} has no opinion of {other} yet."
    now, *earlier = stances(newest_first)
    told = _current(owner, other, now)
    if not earlier:
        return f"{told} No earlier view."
    quoted = "; ".join(_earlier(s) for s in earlier[:EARLIER_QUOTED])
    rest = earlier[EARLIER_QUOTED:]
    more = f"; and {len(rest)} more ({_days([s.since for s in rest])})." if rest else ""
    more += "." if quoted.endswith(")") and not rest else ""
    count = f"{len(earlier)} earlier view{'s' if len(earlier) > 1 else ''}"
    return f"{told} Before that ({count}, newest first): {quoted}{more}"
