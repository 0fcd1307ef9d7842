"""A question's time focus (when.py) placed among one NPC's memories: the frame timing.py ranks by, and the
memories of that time that recall's candidates may lack.

- A span's memories are read from D1 by day (the span and its slack days, at most `SPAN_ROWS`), so a memory that
  search by meaning or words would miss, or one kept in D1 only, is still a candidate.
- An event ("after I came back from the fair") is found among the NPC's memories up to the asker's moment: BM25
  share for the event's words plus cosine similarity where the embedder answers (the keyword view of the recall
  cache: no D1 read while it is current); the `NEAR` memories right after (or before) it join the candidates.
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
from memory_sim.memory.recalling.recall import to_recollection
from memory_sim.memory.recalling.recall_cache import NpcView, RecallCache
from memory_sim.memory.recalling.timing import TimeFrame
from memory_sim.memory.recalling.when import EventAnchor, TimeFocus
from memory_sim.memory.rules import HOURS_PER_DAY

SPAN_ROWS = 60  # a span's memories read from D1 at most: a busy week of one NPC
NEAR = 3  # the memories right after (before) an event that count as "just after (before)" it
EMBEDDED_POOL = 200  # an event is looked for by meaning among this many memories at most (else by words first)
WORD_POOL = 30
MENTION_SHARE = 0.8  # a memory matching the event this well (of the best) mentions it too
FOCUS_CANDIDATES = 50  # recall ranks at least this many candidates for a question about time
ORDINAL_ROWS = 10  # "the last time X": X's best keyword matches join the candidates


@dataclass(frozen=True, slots=True)
class Placement:
    """The frame to rank by and the memories to add to the candidates."""

    frame: TimeFrame
    rows: list[StoredMemory] = field(default_factory=list)


def _hours(memory: StoredMemory) -> int:
    return memory.day * HOURS_PER_DAY + memory.hour


def keyword_view(env: WorkerEnv, npc_id: str, cache: RecallCache | None) -> NpcView:
    """The NPC's every memory with its keyword index: the recall cache's while D1 proves it current, else read."""
    return (cache.view(npc_id, None, "keyword") if cache is not None else None) or NpcView.read(
        env.DB, npc_id, kind="keyword")


def place(env: WorkerEnv, npc_id: str, focus: TimeFocus, now: WorldTime, *, embed: bool,
          cache: RecallCache | None = None) -> Placement:
    """The focus placed for this NPC as of `now`; `embed=False` finds an event by words alone."""
    frame = TimeFrame(now.hours, focus.span, ordinal=focus.ordinal)
    rows: list[StoredMemory] = []
    if focus.span is not None:
        span = focus.span
        rows = store.memories_between_days(env.DB, npc_id, span.first - span.slack, span.last + span.slack,
                                           SPAN_ROWS)
    if focus.anchor is None:
        return Placement(frame, rows)
    view = keyword_view(env, npc_id, cache)
    with view.lock:
        timeline = sorted((m for m in view.rows if m.kind == "observation" and _hours(m) <= now.hours), key=_hours)
        by_words = {m.id: score for m, score in view.keyword_top(focus.anchor.event, WORD_POOL)}
    found = find_event(env, focus.anchor.event, timeline, by_words, embed=embed)
    if not found:
        return Placement(frame, rows)
    anchor = found[0]
    near = beside(timeline, anchor, focus.anchor)
    frame = TimeFrame(now.hours, focus.span, focus.anchor.relation, anchor.id, _hours(anchor),
                      tuple(m.id for m in near), tuple(m.id for m in found[1:]), focus.ordinal)
    return Placement(frame, rows + near)


def beside(timeline: Sequence[StoredMemory], anchor: StoredMemory, event: EventAnchor) -> list[StoredMemory]:
    """The `NEAR` memories right after the anchor (for "after", "since") or right before it ("before"), the
    nearest first."""
    at = next(i for i, m in enumerate(timeline) if m.id == anchor.id)
    if event.relation == "before":
        return list(reversed(timeline[max(0, at - NEAR) : at]))
    return list(timeline[at + 1 : at + 1 + NEAR])


def find_event(env: WorkerEnv, event: str, timeline: Sequence[StoredMemory], by_words: dict[str, float], *,
               embed: bool) -> list[StoredMemory]:
    """The memory that best matches the event, then the others matching at least `MENTION_SHARE` as well: BM25
    share among the NPC's memories (`by_words`, id -> score) plus cosine similarity to the event (when `embed` and
    the embedder answers), among every memory up to `EMBEDDED_POOL` of them, else among the best by words. Empty
    when nothing matches at all."""
    best_words = max(by_words.values(), default=0.0) or 1.0
    pool = [m for m in timeline if m.id in by_words] if len(timeline) > EMBEDDED_POOL or not embed else list(timeline)
    similarity = np.zeros(len(pool), dtype=np.float32)
    if embed and pool:
        with contextlib.suppress(EmbeddingUnavailable):
            similarity = env.embedder.embed([m.content for m in pool]) @ env.embedder.embed([event], query=True)[0]
    scored = [(by_words.get(m.id, 0.0) / best_words + float(s), i) for i, (m, s) in
              enumerate(zip(pool, similarity, strict=True))]
    ranked = sorted(scored, key=lambda pair: -pair[0])
    if not ranked or ranked[0][0] <= 0.0:
        return []
    return [pool[i] for score, i in ranked if score >= MENTION_SHARE * ranked[0][0]]


def pulled(env: WorkerEnv, npc_id: str, placement: Placement, seen: set[str], topic: str,
           cache: RecallCache | None = None) -> list[Recollection]:
    """The placement's memories not among the candidates yet, and for "the last/first time" the topic's best
    keyword matches over all the NPC's memories (those kept in D1 only too): as recollections (`source="d1"`)
    scored by their keyword share (BM25 over the NPC's memories for the topic, divided by the best match's)."""
    view = keyword_view(env, npc_id, cache)
    matches = view.keyword_top(topic, FOCUS_CANDIDATES)
    best = matches[0][1] if matches and matches[0][1] > 0 else 1.0
    share = {m.id: score / best for m, score in matches}
    rows = list(placement.rows)
    if placement.frame.ordinal is not None:
        rows += [m for m, _ in matches[:ORDINAL_ROWS]]
    fresh = {m.id: m for m in rows if m.id not in seen}
    return [to_recollection(m, share.get(m.id, 0.0), "d1") for m in fresh.values()]
