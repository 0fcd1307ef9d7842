"""Planning one day's consolidation. Pure: no I/O, no clock (jobs.consolidate reads D1 and applies the plan).

A day is condensed from its memories, never from the diary's text: the diary's "It brought back day N: ..." line
points at an earlier memory and is no part of the day, so a summary never carries (or nests) that framing.
- a day of one memory (or of one text, remembered more than once) is linked to it, not summarised;
- otherwise the day's memories are grouped by what they are about (consolidation/topics.py) and the summariser
  condenses each topic of two or more memories on its own, so a summary never joins unrelated sentences; a
  topic of one memory is left as it is, and so is a topic whose summary says no more than one of its memories
  (its text inside that memory's);
- a summary keeps the dominant type of its sources (by importance), the union of their `about`, and records them;
- the diary links to the day's first summary (its most important topic's), else to its most important memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory_sim.memory.consolidation.summarise import Sentence
from memory_sim.memory.consolidation.topics import group_by_topic
from memory_sim.memory.models import (
    ShortTermMemory,
    StoredMemory,
    WorldTime,
    summary_id,
)
from memory_sim.memory.scoring import text_key

DIARY_ENTRIES = 6  # a diary's (and so a summary's) share of a busy day: its most important memories
SUMMARY_HOUR = 23


Topics = Callable[[Sequence[StoredMemory]], list[tuple[StoredMemory, ...]]]


@dataclass(frozen=True, slots=True)
class Made:
    """One summary of a day and the ids of the memories it was made from."""

    summary: ShortTermMemory
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DayPlan:
    """What consolidating one NPC's day does: store `made` (one summary a topic; none: nothing new), and record
    `link` on the diary (the first summary's id, else the day's most important memory's, or "" for a day with no
    memory)."""

    npc_id: str
    day: int
    link: str
    made: tuple[Made, ...] = ()

    @property
    def summary(self) -> ShortTermMemory | None:
        """The day's first summary (its most important topic's), or None."""
        return self.made[0].summary if self.made else None

    @property
    def sources(self) -> tuple[str, ...]:
        """The first summary's sources."""
        return self.made[0].sources if self.made else ()


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


def _summary(npc_id: str, day: int, topic: int, text: str, sources: Sequence[StoredMemory]) -> ShortTermMemory:
    top = sorted((m.importance for m in sources), reverse=True)[:3]
    return ShortTermMemory(
        npc_id=npc_id,
        content=text,
        importance=round(sum(top) / len(top), 4),
        world_time=WorldTime(day, SUMMARY_HOUR),
        type=dominant_type(sources),  # type: ignore[arg-type]
        about=joint_about(sources),
        id=summary_id(npc_id, day, topic),
        kind="summary",
    )


def _condensed(
    topic: Sequence[StoredMemory], summarise: Callable[[list[Sentence]], str]
) -> tuple[str, list[StoredMemory]] | None:
    """A topic's summary text and the memories it quotes, or None when it says no more than one of them."""
    text = summarise([(m.content.strip(), m.importance) for m in topic]).strip()
    key = text_key(text)
    if not key or any(_contains(text_key(m.content), key) for m in topic):
        return None
    used = {text_key(m.content) for m in quoted_sources(text, topic)}
    return text, [m for m in topic if text_key(m.content) in used]


def plan_day(
    npc_id: str,
    day: int,
    memories: Sequence[StoredMemory],
    summarise: Callable[[list[Sentence]], str],
    topics: Topics = group_by_topic,
) -> DayPlan:
    """The plan for one day from its memories in D1; `summarise` condenses (text, importance) pairs, `topics`
    groups the day's memories (topics.group_by_topic without the NPC registry or vectors by default)."""
    entries = diary_entries(memories)
    if not entries:
        return DayPlan(npc_id, day, "")
    distinct = _one_per_text(entries)
    if len(distinct) == 1:
        return DayPlan(npc_id, day, distinct[0].id)
    made: list[Made] = []
    for topic in topics(distinct):
        condensed = _condensed(topic, summarise) if len(topic) > 1 else None
        if condensed is not None:
            text, quoted = condensed
            sources = [m for m in entries if text_key(m.content) in {text_key(q.content) for q in quoted}]
            made.append(Made(_summary(npc_id, day, len(made) + 1, text, sources), tuple(m.id for m in sources)))
    if not made:  # no topic of two memories, or none said more than one of them: the day's most important
        return DayPlan(npc_id, day, sorted(distinct, key=lambda m: -m.importance)[0].id)
    return DayPlan(npc_id, day, made[0].summary.id, tuple(made))
