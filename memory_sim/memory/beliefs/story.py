"""What one NPC thinks of another, told from its opinion's state key ("opinion:<other>"): the current view first
with the day it began, then how it changed, newest first (pure, no I/O):

    Ada's view of Cole, since day 4: "A trustworthy friend now." Before that (2 earlier views, newest first):
    day 3, "I was wrong about him."; day 1, "I don't trust him."

The views are the NPC's own words, quoted: no word list decides whether a view is warm or cold. Where there is no
view: "Ada has no opinion of Cole yet."
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

QUOTE_WORDS = 14
EARLIER_QUOTED = 3  # earlier views quoted one by one; the rest are counted, with their days


@dataclass(frozen=True, slots=True)
class View:
    """One memory under the opinion's key: the sim day it was remembered for, and its words."""

    day: int
    text: str


def opinion_key(other: str) -> str:
    """The state key of an NPC's opinion of `other` (what keys.infer_key gives an opinion about one NPC)."""
    return f"opinion:{other}"


def _quoted(text: str) -> str:
    cut = text.split()
    return '"' + " ".join(cut[:QUOTE_WORDS]) + ("..." if len(cut) > QUOTE_WORDS else "") + '"'


def _days(days: Sequence[int]) -> str:
    first, last = min(days), max(days)
    return f"day {first}" if first == last else f"days {first} to {last}"


def opinion_story(owner: str, other: str, newest_first: Sequence[View]) -> str:
    """The current view with the day it began, then the earlier ones newest first (the first `EARLIER_QUOTED`
    quoted, the rest counted with their days); "<owner> has no opinion of <other> yet." when there is none."""
    if not newest_first:
        return f"{owner} has no opinion of {other} yet."
    now, earlier = newest_first[0], list(newest_first[1:])
    told = f"{owner}'s view of {other}, since day {now.day}: {_quoted(now.text)}"
    if not earlier:
        return f"{told} No earlier view."
    quoted = "; ".join(f"day {v.day}, {_quoted(v.text)}" for v in earlier[:EARLIER_QUOTED])
    rest = earlier[EARLIER_QUOTED:]
    more = f"; and {len(rest)} more ({_days([v.day for v in rest])})." if rest else ""
    count = f"{len(earlier)} earlier view{'s' if len(earlier) > 1 else ''}"
    return f"{told} Before that ({count}, newest first): {quoted}{more}"
