"""Why recall ranked what it did: each recalled memory's score taken apart into its terms.

    explain(system, "margaret", "What does Margaret think of Tom?", mode="hybrid", day=14)

The results are `MemorySystem.recall` / `weighted_recall`'s own; the terms are recomputed beside them from the
same inputs (the index's top matches, BM25 over D1, the NPC's timeline) with hybrid.py's pure `hybrid_parts`,
and for weighted recall scoring.py's formula term by term. Nothing is written.

Two steps after the mode's score can change it, and each shows as one more term, so the terms still add up to
the score recall shows: `handover`, what scoring.current_first moved between a state key's versions (its current
memory takes the best score its versions earned, an older one a lower one; a current memory pulled in from D1
has no hybrid terms of its own and all of its score is handed over), and `time`, what timing.rank_in_time's
re-scoring of a question about time changed (it replaces the score by a relevance share plus a time boost; a
key's handover before it is counted in this term). Weighted recall re-scores its weighted score in time instead:
there the difference is `Weighting.time`, and `handover` is what current_first moved.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memory_sim.errors import EmbeddingUnavailable, VectorizeUnavailable
from memory_sim.memory.ledger import store
from memory_sim.memory.models import RecallMode, Recollection, StoredMemory, WorldTime
from memory_sim.memory.recalling import cues
from memory_sim.memory.recalling import recall as recall_sources
from memory_sim.memory.recalling.hybrid import HybridParams, HybridParts, Timeline, hybrid_parts
from memory_sim.memory.recalling.when import resolve_time

if TYPE_CHECKING:
    from memory_sim.memory.system import MemorySystem


@dataclass(frozen=True, slots=True)
class Weighting:
    """score * importance / (1 + age * decay_factor), term by term (age = current day - memory day, >= 0);
    for a summary at most `source_cap`, the best effective score among its sources recalled with it (None: not
    capped; see scoring.capped_by_sources)."""

    score: float
    importance: float
    age: int
    decay_factor: float
    source_cap: float | None = None
    shown: float | None = None  # the weighted score recall showed: the formula's to rounding (a handed-over score)
    time: float = 0.0  # a question about time: the weighted score shown less the formula's (timing.rank_in_time)

    @property
    def divisor(self) -> float:
        return 1.0 + self.age * self.decay_factor

    @property
    def uncapped(self) -> float:
        return self.score * self.importance / self.divisor

    @property
    def effective(self) -> float:
        if self.shown is not None:
            return self.shown
        return self.uncapped if self.source_cap is None else min(self.uncapped, self.source_cap)


@dataclass(frozen=True, slots=True)
class Explained:
    """One recalled memory and its score's parts. `hybrid` is None outside hybrid mode (the score is the
    vector similarity or the keyword score itself) or when recall fell back to D1's word overlap."""

    recollection: Recollection
    hybrid: HybridParts | None
    weighting: Weighting | None
    handover: float = 0.0  # what current_first moved between a state key's versions (see the module docstring)
    time: float = 0.0  # what rank_in_time's re-scoring of a question about time changed

    @property
    def total(self) -> float | None:
        """The hybrid terms plus the handover and time terms: the score recall shows (None without terms)."""
        return None if self.hybrid is None else self.hybrid.total + self.handover + self.time


def explain(
    system: MemorySystem, npc_id: str, query: str, *, mode: RecallMode = "hybrid", weighted: bool = False,
    day: int | None = None, top_k: int = 5,
) -> list[Explained]:
    """`recall` (or `weighted_recall` at `day`) with each result's score taken apart."""
    if weighted:
        results = system.weighted_recall(npc_id, query, day, top_k=top_k, mode=mode)
        current = system.today() if day is None else day
    else:
        results = system.recall(npc_id, query, top_k=top_k, mode=mode)
    focus = resolve_time(query, WorldTime.from_seconds(system.clock()), system.config.day_zero)
    # recall ranks a question about time by its topic (the time words taken out), re-scored in time after
    parts = _hybrid_parts(system, npc_id, focus.topic if focus.any else query) if mode == "hybrid" and results else {}
    timed = focus.any
    out = []
    for r in results:
        weighting = _weighting(r, current, timed) if weighted else None
        hybrid = parts.get(r.id)
        if parts and hybrid is None:  # pulled in, not found: a key's current memory, a memory of the asked time
            hybrid = HybridParts(None, None, 0.0, 0.0, 0.0)
        rest = 0.0 if hybrid is None else r.score - hybrid.total
        if timed and not weighted:  # weighted recall re-scores the weighted score in time, not `score`
            out.append(Explained(r, hybrid, weighting, time=rest))
        else:
            out.append(Explained(r, hybrid, weighting, handover=rest if r.state_key is not None else 0.0))
    return out


def _weighting(r: Recollection, current: int, timed: bool = False) -> Weighting:
    """The formula's terms; a summary's cap is read from its result (its sources' scores are recall's own). For a
    question about time (`timed`) the weighted score shown is rank_in_time's re-scoring of the formula's: `time`
    says by how much it differs."""
    plain = Weighting(r.score, r.importance, max(0, current - r.day), r.decay_factor, shown=r.effective_score)
    if timed:
        return replace(plain, time=(r.effective_score or 0.0) - plain.uncapped)
    effective = r.effective_score
    # only a summary is capped (scoring.capped_by_sources); a handed-over score (current_first) can differ from
    # the formula's by rounding alone
    if (r.kind == "summary" and effective is not None and effective < plain.uncapped
            and not math.isclose(effective, plain.uncapped, rel_tol=1e-12)):
        return replace(plain, source_cap=effective)
    return plain


def timeline_of(rows: Sequence[StoredMemory]) -> tuple[Timeline, dict[str, tuple[int, int]]]:
    """Hybrid recall's episodes: sim days in order of their first memory, memories in remember order; summaries
    are in none (made a day later from the whole day, they are no memory's neighbour)."""
    days: dict[int, list[str]] = {}
    numbers: dict[int, int] = {}
    positions: dict[str, tuple[int, int]] = {}
    for m in (m for m in rows if m.kind != "summary"):  # as recall: a summary neither lends nor takes context
        number = numbers.setdefault(m.day, len(numbers))
        episode = days.setdefault(m.day, [])
        positions[m.id] = (number, len(episode))
        episode.append(m.id)
    return Timeline.of(list(days.values())), positions


def _hybrid_parts(system: MemorySystem, npc_id: str, query: str) -> dict[str, HybridParts]:
    """The terms of hybrid recall's scores, from the inputs recall.hybrid_candidates ranks (empty when it could
    not have ranked: no embedding or no index, where recall falls back to word overlap)."""
    from memory_sim.memory.recalling.keyword import BM25Index, sentence_tokens

    env, params, asked = system.env, HybridParams(), query
    if system.config.expand_npc_names:
        query = recall_sources.expand_query(query, store.npc_profiles(env.DB), npc_id)
    rows = store.semantic_in_order(env.DB, npc_id)
    by_id = {m.id: m for m in rows}
    try:
        query_vector = env.embedder.embed([query], query=True)[0]
        matches = recall_sources.vector_matches(env, npc_id, query_vector, params.vector_candidates)
    except (EmbeddingUnavailable, VectorizeUnavailable):
        return {}
    vector = {i: s for i, s in matches if i in by_id}
    if not vector:
        return {}
    keyword = BM25Index()
    for m in rows:
        if m.kind == "summary":  # as recall: scored as its best sentence, not in the statistics
            keyword.add_parts(m.id, sentence_tokens(m.content))
        else:
            keyword.add(m.id, m.content)
    timeline, positions = timeline_of(rows)
    before, after = _cue_factors(system, asked, rows) if system.config.query_cues else (None, None)
    return hybrid_parts(vector, keyword.scores(query), timeline, params, positions, before, after)


def _cue_factors(
    system: MemorySystem, asked: str, rows: Sequence[StoredMemory]
) -> tuple[dict[str, float], dict[str, float]]:
    """Query cues' multipliers by id, as recall applies them (memory/recalling/cues.py)."""
    memories = {m.id: cues.memory_cues(m.content) for m in rows}
    question = cues.query_cues(asked, {c.subject for c in memories.values() if c.subject}, system.config.day_zero)
    weights = cues.CueWeights()
    days = {m.id: m.day for m in rows}
    return ({i: cues.before_factor(question, c, days[i], weights) for i, c in memories.items()},
            {i: cues.after_factor(question, c, weights) for i, c in memories.items()})
