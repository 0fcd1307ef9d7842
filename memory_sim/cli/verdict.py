"""The demo's answer in one line, and the memories it shows without near-repeats (pure functions, no I/O)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")
NEAR_REPEAT = 0.8  # share of words two memories have in common (Jaccard) above which the second adds nothing
GIST_WORDS = 8


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9']+", text.lower()))


def distinct(found: Sequence[Any], limit: int) -> list[Any]:
    """The first `limit` of `found` (ranked items with a `.text`) whose words are not a near-repeat of one kept."""
    kept: list[Any] = []
    for item in found:
        mine = words(item.text)
        if all(_jaccard(mine, words(k.text)) < NEAR_REPEAT for k in kept):
            kept.append(item)
        if len(kept) == limit:
            break
    return kept


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def verdict(name: str, role: str, other: str, affinity: float | None, before: float | None,
            memories: Sequence[str], opinion: str = "", turns: Sequence[tuple[int, str, str]] = (),
            held: str | None = None) -> str:
    """'Margaret (baker) on Tom: Margaret's view of Tom, since day 10: "..." Before that (...) It changed on
    day 10, after a kindness: "...". Affinity +0.42 (up 0.30 over the run); remembers: ...': her current view and how it
    changed (`MemorySystem.opinion`) first, then what turned it (`turns`: day, kind of event, the event's
    words), the village's affinity and the top memories' gist. `held` ("warm", "cold"): the view the village says
    is held; an affinity on its other side is said to be short of turning it (views turn only past a dead band)."""
    feeling = "no recorded feeling" if affinity is None else f"affinity {affinity:+.2f}"
    if affinity is not None and before is not None:
        change = affinity - before
        trend = "unchanged" if abs(change) < 0.005 else f"{'up' if change > 0 else 'down'} {abs(change):.2f}"
        feeling += f" ({trend} over the run)"
    if affinity is not None and (held, affinity < 0) in (("warm", True), ("cold", False)) and affinity != 0:
        feeling += f", not enough to turn {name}'s {held} view"
    gist = "; ".join(_gist(text) for text in memories[:3]) or "nothing about them"
    if turns:
        told = "; ".join(f"on day {day}, after {_a(cause)}: {_quoted(text)}" for day, cause, text in turns)
        opinion = f"{opinion} It changed {told}" if opinion else opinion
    if opinion:
        return f"{name} ({role}) on {other}: {opinion} {feeling[0].upper()}{feeling[1:]}; remembers: {gist}"
    return f"{name} ({role}) on {other}: {feeling}; remembers: {gist}"


def _a(cause: str) -> str:
    return {"kindness": "a kindness", "quarrel": "a quarrel", "slight": "a slight", "rumour": "a rumour",
            "chat": "their talks"}.get(cause, cause)


def _quoted(text: str) -> str:
    return f'"{text}"'


def _gist(text: str) -> str:
    cut = text.split()
    return " ".join(cut[:GIST_WORDS]) + ("..." if len(cut) > GIST_WORDS else "")
