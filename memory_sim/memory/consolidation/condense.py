"""Planning one day's consolidation. Pure: no I/O, no clock (jobs.consolidate reads D1 and applies the plan).

A day is condensed from its memories, never from the diary's text: the diary's "It brought back day N: ..." line
points at an earlier memory and is no part of the day, so a summary never carries (or nests) that framing.
- a day of one memory (or of one text, remembered more than once) is linked to it, not summarised;
- otherwise the summariser condenses the day's memories; a result that says no more than one of them (its text
  inside that memory's) is linked to that memory instead;
- a summary keeps the dominant type of its sources (by importance), the union of their `about`, and records them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory_sim.memory.consolidation.summarise import Sentence
from memory_sim.memory.models import (
    ShortTermMemory,
    StoredMemory,
    WorldTime,
    summary_id,
)
from memory_sim.memory.scoring import text_key

DIARY_ENTRIES = 6  # a diary's (and so a summary's) share of a busy day: its most important memories
SUMMARY_HOUR = 23


@dataclass(frozen=True, slots=True)
class DayPlan:
    """What consolidating one NPC's day does: store `summary` (None: nothing new) made from `sources`, and
    record `link` on the diary (the summary's id, the one memory's id, or "" for a day with no memory)."""

    npc_id: str
    day: int
    link: str
    summary: ShortTermMemory | None = None
    sources: tuple[str, ...] = ()


def diary_entries(memories: Sequence[StoredMemory], max_entries: int = DIARY_ENTRIES) -> list[StoredMemory]:
    """The day's most important observations (never summaries), in the order they happened."""
    observations = [m for m in memories if m.kind == "observation"]
    chosen = sorted(observations, key=lambda m: (-m.importance, m.hour, m.id))[:max_entries]
    return sorted(chosen, key=lambda m: (m.hour, m.id))


def _contains(outer: str, inner: str) -> bool:
    return f" {inner} " in f" {outer} "


def _one_per_text(entries: Sequence[StoredMemory]) -> list[StoredMemory]:
    """The most important memory of each text, in the entries' order."""
    best: dict[str, StoredMemory] = {}
    for m in entries:
        key = text_key(m.content)
        if key not in best or m.importance > best[key].importance:
            best[key] = m
    return [m for m in entries if best[text_key(m.content)] is m]


def quoted_sources(text: str, entries: Sequence[StoredMemory]) -> list[StoredMemory]:
    """The entries a summary is made of: those it quotes when it is nothing but quotes (extractive), else all
    of them (an abstractive summary draws on everything it was given)."""
    rest, quoted = f" {text_key(text)} ", []
    for m in sorted(entries, key=lambda m: -len(m.content)):  # longest first: a text inside another stays whole
        key = text_key(m.content)
        if key and f" {key} " in rest:
            rest = rest.replace(f" {key} ", " ", 1)
            quoted.append(m)
    return [m for m in entries if m in quoted] if quoted and not rest.strip() else list(entries)


def dominant_type(sources: Sequence[StoredMemory]) -> str:
    """The type carrying the most importance; a tie goes to the type of the most important source."""
    weight: dict[str, float] = {}
    for m in sources:
        weight[m.type] = weight.get(m.type, 0.0) + m.importance
    first: dict[str, int] = {}
    for i, m in enumerate(sorted(sources, key=lambda m: -m.importance)):
        first.setdefault(m.type, i)
    return min(weight, key=lambda t: (-round(weight[t], 9), first[t]))


def joint_about(sources: Sequence[StoredMemory]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(a for m in sources for a in m.about))


def _summary(npc_id: str, day: int, text: str, sources: Sequence[StoredMemory]) -> ShortTermMemory:
    top = sorted((m.importance for m in sources), reverse=True)[:3]
    return ShortTermMemory(
        npc_id=npc_id,
        content=text,
        importance=round(sum(top) / len(top), 4),
        world_time=WorldTime(day, SUMMARY_HOUR),
        type=dominant_type(sources),  # type: ignore[arg-type]
        about=joint_about(sources),
        id=summary_id(npc_id, day),
        kind="summary",
    )


def plan_day(
    npc_id: str, day: int, memories: Sequence[StoredMemory], summarise: Callable[[list[Sentence]], str]
) -> DayPlan:
    """The plan for one day from its memories in D1; `summarise` condenses (text, importance) pairs."""
    entries = diary_entries(memories)
    if not entries:
        return DayPlan(npc_id, day, "")
    distinct = _one_per_text(entries)
    if len(distinct) == 1:
        return DayPlan(npc_id, day, distinct[0].id)
    text = summarise([(m.content.strip(), m.importance) for m in distinct]).strip()
    key = text_key(text)
    repeated = [m for m in distinct if _contains(text_key(m.content), key)]
    if not key or repeated:  # says nothing, or nothing one memory does not: point at that memory
        return DayPlan(npc_id, day, (repeated or sorted(distinct, key=lambda m: -m.importance))[0].id)
    used = {text_key(m.content) for m in quoted_sources(text, distinct)}
    sources = [m for m in entries if text_key(m.content) in used]
    summary = _summary(npc_id, day, text, sources)
    return DayPlan(npc_id, day, summary.id, summary, tuple(m.id for m in sources))
