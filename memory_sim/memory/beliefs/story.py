"""What one NPC thinks of another, told the current opinion first, then how it changed (pure, no I/O):

    Margaret trusts Tom. Margaret distrusted Tom until day 5; since day 5 ("Tom pulled my cart out of the fire.")
    Margaret trusts Tom.

An opinion is the warmth (detect.polarity) of the NPC's opinion and relationship memories about the other, in
the order they happened; one that takes the last back ("I was wrong about him") turns it; memories with no warmth
either way leave it as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory_sim.memory.beliefs.detect import polarity, revises

_NOW = {1: "trusts", -1: "distrusts"}
_THEN = {1: "trusted", -1: "distrusted"}
QUOTE_WORDS = 12


@dataclass(frozen=True, slots=True)
class Stance:
    """One memory's opinion of the other: when (`hours` since day 0), warm (+1) or cold (-1), and its words."""

    hours: int
    warmth: int
    text: str

    @property
    def day(self) -> int:
        return self.hours // 24


def stances(memories: Sequence[tuple[int, str]]) -> list[Stance]:
    """(hours, text) of memories about the other, as `Stance`s in time order; one that takes the last opinion
    back ("I was wrong about him") turns it; those with no warmth either way are left out."""
    found: list[Stance] = []
    for hours, text in sorted(memories, key=lambda m: m[0]):
        warmth = polarity(text)
        if not warmth and found and revises(text):
            warmth = -found[-1].warmth
        if warmth:
            found.append(Stance(hours, warmth, text))
    return found


def _runs(ordered: Sequence[Stance]) -> list[list[Stance]]:
    """Consecutive stances of the same warmth, grouped: each group is one period of one opinion."""
    runs: list[list[Stance]] = []
    for stance in ordered:
        if runs and runs[-1][0].warmth == stance.warmth:
            runs[-1].append(stance)
        else:
            runs.append([stance])
    return runs


def _quoted(text: str) -> str:
    cut = text.split()
    return '"' + " ".join(cut[:QUOTE_WORDS]) + ("..." if len(cut) > QUOTE_WORDS else "") + '"'


def opinion_story(owner: str, other: str, ordered: Sequence[Stance]) -> str:
    """The current opinion first, then its last change, then how often it turned before: "Margaret trusts Tom.
    Margaret distrusted Tom until day 5; since day 5 ("...") Margaret trusts Tom. Before that it turned twice
    (days 2 and 3)." One sentence when it never changed; "" when there is no opinion."""
    runs = _runs(ordered)
    if not runs:
        return ""
    now = runs[-1]
    current = f"{owner} {_NOW[now[0].warmth]} {other}."
    if len(runs) == 1:
        first, last = now[0].day, now[-1].day
        span = f"day {first}" if first == last else f"days {first} to {last}"
        return f"{current} That has not changed ({span})."
    last_change = (f"{owner} {_THEN[runs[-2][0].warmth]} {other} until day {now[0].day}; since day {now[0].day} "
                   f"({_quoted(now[0].text)}) {owner} {_NOW[now[0].warmth]} {other}.")
    turns = len(runs) - 2
    if not turns:
        return f"{current} {last_change}"
    times = {1: "once", 2: "twice"}.get(turns, f"{turns} times")
    days = sorted({run[0].day for run in runs[1:-1]})
    listed = ", ".join(str(d) for d in days[:-1]) + (" and " if len(days) > 1 else "") + str(days[-1])
    return f"{current} {last_change} Before that it turned {times} (day{'s' if len(days) > 1 else ''} {listed})."
