"""Why recall ranked what it did: each recalled memory's score taken apart into its terms.

    explain(system, "margaret", "What does Margaret think of Tom?", mode="hybrid", day=14)

The results are `MemorySystem.recall` / `weighted_recall`'s own; the terms are recomputed beside them from the
same inputs (the index's top matches, BM25 over D1, the NPC's timeline) with hybrid.py's pure `hybrid_parts`,
and for weighted recall scoring.py's formula term by term. Nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memory_sim.errors import EmbeddingUnavailable, VectorizeUnavailable
from memory_sim.memory.ledger import store
from memory_sim.memory.models import RecallMode, Recollection, StoredMemory
from memory_sim.memory.recalling import cues
from memory_sim.memory.recalling import recall as recall_sources
from memory_sim.memory.recalling.hybrid import HybridParams, HybridParts, Timeline, hybrid_parts

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

    @property
    def divisor(self) -> float:
        return 1.0 + self.age * self.decay_factor

    @property
    def uncapped(self) -> float:
        return self.score * self.importance / self.divisor

    @property
    def effective(self) -> float:
        return self.uncapped if self.source_cap is None else min(self.uncapped, self.source_cap)


@dataclass(frozen=True, slots=True)
class Explained:
    """One recalled memory and its score's parts. `hybrid` is None outside hybrid mode (the score is the
    vector similarity or the keyword score itself) or when recall fell back to D1's word overlap."""

    recollection: Recollection
    hybrid: HybridParts | None
    weighting: Weighting | None


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
    parts = _hybrid_parts(system, npc_id, query) if mode == "hybrid" and results else {}
    out = []
    for r in results:
        weighting = _weighting(r, current) if weighted else None
        out.append(Explained(r, parts.get(r.id), weighting))
    return out


def _weighting(r: Recollection, current: int) -> Weighting:
    """The formula's terms; a summary's cap is read from its result (its sources' scores are recall's own)."""
    plain = Weighting(r.score, r.importance, max(0, current - r.day), r.decay_factor)
    if r.effective_score is not None and r.effective_score < plain.uncapped:
        return replace(plain, source_cap=r.effective_score)
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
