"""A question's time focus (when.py) placed among one NPC's memories: the frame timing.py ranks by, and the
memories of that time that recall's candidates may lack.

- A span's memories are read from D1 by day (the span and its slack days, at most `SPAN_ROWS`), so a memory that
  search by meaning or words would miss, or one kept in D1 only, is still a candidate.
- An event ("after I came back from the fair") is found by meaning among the NPC's memories up to the asker's
  moment: word overlap with the event's words, plus cosine similarity where the embedder answers; the `NEAR`
  memories right after (or before) it join the candidates.
- "The last (first) time X": X's best keyword matches over all the NPC's memories join the candidates.
Pulled memories come back with `source="d1"`, scored by their keyword share (timing.py ranks them by it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.errors import EmbeddingUnavailable
from memory_sim.memory.ledger import store
from memory_sim.memory.models import Recollection, StoredMemory, WorldTime
from memory_sim.memory.recalling.keyword import tokenize
from memory_sim.memory.recalling.recall import keyword_candidates, to_recollection
from memory_sim.memory.recalling.recall_cache import RecallCache
from memory_sim.memory.recalling.timing import TimeFrame
from memory_sim.memory.recalling.when import EventAnchor, TimeFocus
from memory_sim.memory.rules import HOURS_PER_DAY

SPAN_ROWS = 60  # a span's memories read from D1 at most: a busy week of one NPC
NEAR = 3  # the memories right after (before) an event that count as "just after (before)" it
EMBEDDED_POOL = 200  # an event is looked for by meaning among this many memories at most (else by words first)
WORD_POOL = 30
FOCUS_CANDIDATES = 50  # recall ranks at least this many candidates for a question about time
ORDINAL_ROWS = 10  # "the last time X": X's best keyword matches join the candidates


@dataclass(frozen=True, slots=True)
class Placement:
    """The frame to rank by and the memories to add to the candidates."""

    frame: TimeFrame
    rows: list[StoredMemory] = field(default_factory=list)


def _hours(memory: StoredMemory) -> int:
    return memory.day * HOURS_PER_DAY + memory.hour


def place(env: WorkerEnv, npc_id: str, focus: TimeFocus, now: WorldTime, *, embed: bool) -> Placement:
    """The focus placed for this NPC as of `now`; `embed=False` finds an event by words alone."""
    frame = TimeFrame(now.hours, focus.span, ordinal=focus.ordinal)
    rows: list[StoredMemory] = []
    if focus.span is not None:
        span = focus.span
        rows = store.memories_between_days(env.DB, npc_id, span.first - span.slack, span.last + span.slack,
                                           SPAN_ROWS)
    if focus.anchor is None:
        return Placement(frame, rows)
    timeline = sorted((m for m in store.remembered_in_order(env.DB, npc_id)
                       if m.kind == "observation" and _hours(m) <= now.hours), key=_hours)
    anchor = find_event(env, focus.anchor.event, timeline, embed=embed)
    if anchor is None:
        return Placement(frame, rows)
    near = beside(timeline, anchor, focus.anchor)
    frame = TimeFrame(now.hours, focus.span, focus.anchor.relation, anchor.id, _hours(anchor),
                      tuple(m.id for m in near), focus.ordinal)
    return Placement(frame, rows + near)


def beside(timeline: Sequence[StoredMemory], anchor: StoredMemory, event: EventAnchor) -> list[StoredMemory]:
    """The `NEAR` memories right after the anchor (for "after", "since") or right before it ("before"), the
    nearest first."""
    at = next(i for i, m in enumerate(timeline) if m.id == anchor.id)
    if event.relation == "before":
        return list(reversed(timeline[max(0, at - NEAR) : at]))
    return list(timeline[at + 1 : at + 1 + NEAR])


def word_overlap(wanted: Sequence[str], text: str) -> float:
    if not wanted:
        return 0.0
    return len(set(wanted) & set(tokenize(text))) / len(set(wanted))


def find_event(env: WorkerEnv, event: str, timeline: Sequence[StoredMemory], *, embed: bool) -> StoredMemory | None:
    """The memory that best matches the event's words: word overlap + cosine similarity (when `embed` and the
    embedder answers). None when nothing matches at all."""
    wanted = tokenize(event)
    overlap = [word_overlap(wanted, m.content) for m in timeline]
    pool = list(range(len(timeline)))
    if len(pool) > EMBEDDED_POOL or not embed:
        pool = sorted(pool, key=lambda i: -overlap[i])[:WORD_POOL]
    similarity = np.zeros(len(pool), dtype=np.float32)
    if embed and pool:
        with contextlib.suppress(EmbeddingUnavailable):
            vectors = env.embedder.embed([timeline[i].content for i in pool])
            similarity = vectors @ env.embedder.embed([event], query=True)[0]
    scored = [(overlap[i] + float(s), i) for i, s in zip(pool, similarity, strict=True)]
    best = max(scored, default=(0.0, -1))
    return timeline[best[1]] if best[0] > 0.0 else None


def pulled(env: WorkerEnv, npc_id: str, placement: Placement, seen: set[str], topic: str,
           cache: RecallCache | None = None) -> list[Recollection]:
    """The placement's memories not among the candidates yet, and for "the last/first time" the topic's best
    keyword matches over all the NPC's memories (those kept in D1 only too): as recollections (`source="d1"`)
    scored by their keyword share (BM25 over the NPC's memories for the topic, divided by the best match's)."""
    matches = {r.id: r for r in keyword_candidates(env, npc_id, topic, FOCUS_CANDIDATES, cache)}
    rows = list(placement.rows)
    if placement.frame.ordinal is not None:
        rows += [m for m in store.memories_by_ids(env.DB, list(matches)[:ORDINAL_ROWS]).values()]
    fresh = {m.id: m for m in rows if m.id not in seen}
    return [to_recollection(m, matches[m.id].score if m.id in matches else 0.0, "d1") for m in fresh.values()]
