"""Hybrid recall ranking: fusing a vector ranking with a keyword ranking, plus neighbour context. Pure functions.

Everything here works on what the memory system has at recall time: candidate ids with vector scores (a
Vectorize query's top N), keyword scores (BM25 over the texts in D1), and each memory's neighbours in the
order it was remembered (ids in D1 order). Nothing needs all vectors of an NPC.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Scores = Mapping[str, float]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: float = 60.0) -> dict[str, float]:
    """Plain RRF (Cormack et al., 2009): sum over rankings of 1 / (k + rank), rank counted from 1."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, doc_id in enumerate(ranking, start=1):
            fused[doc_id] = fused.get(doc_id, 0.0) + 1.0 / (k + rank)
    return fused


def normalise_max(scores: Scores) -> dict[str, float]:
    """Scale scores into [0, 1] by the best one (0 stays 0: an absent keyword match means no evidence)."""
    top = max(scores.values(), default=0.0)
    if top <= 0.0:
        return {doc_id: 0.0 for doc_id in scores}
    return {doc_id: max(score, 0.0) / top for doc_id, score in scores.items()}


def normalise_minmax(scores: Scores) -> dict[str, float]:
    """Scale scores linearly onto [0, 1] over the candidates given (all equal -> all 1)."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    return {doc_id: 1.0 if span == 0 else (score - low) / span for doc_id, score in scores.items()}


def weighted_fusion(parts: Sequence[tuple[Scores, float]]) -> dict[str, float]:
    """Sum of weight * score over the parts; an id missing from a part scores 0 there."""
    fused: dict[str, float] = {}
    for scores, weight in parts:
        for doc_id, score in scores.items():
            fused[doc_id] = fused.get(doc_id, 0.0) + weight * score
    return fused


def top_ids(scores: Scores, k: int) -> list[str]:
    """The `k` best ids, highest score first; ties broken by id for determinism."""
    return [doc_id for doc_id, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]]


@dataclass(frozen=True, slots=True)
class Timeline:
    """Memories in the order they were remembered, split into episodes (a conversation session, a sim day):
    neighbour context never crosses an episode boundary."""

    episodes: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, episodes: Sequence[Sequence[str]]) -> Timeline:
        return cls(tuple(tuple(episode) for episode in episodes))

    def positions(self) -> dict[str, tuple[int, int]]:
        """id -> (episode, index within it)."""
        return {doc_id: (e, i) for e, episode in enumerate(self.episodes) for i, doc_id in enumerate(episode)}


@dataclass(frozen=True, slots=True)
class HybridParams:
    """Tuned on LoCoMo conv-26 and conv-30 only (docs/recall-quality.md); held out on the other eight."""

    vector_weight: float = 0.3
    keyword_weight: float = 0.7
    neighbour_weights: tuple[float, ...] = (0.5, 0.3)  # for neighbours at distance 1, 2, ...
    vector_candidates: int = 100  # Vectorize's topK cap without metadata
    # a source scoring at least this share of its summary's score stands instead of the summary (scoring.py,
    # yield_to_sources): a lead that small is keyword matches its other sentences add up. Set on the village eval
    # (any share from 0.85 to 0.93 gives the same rankings there), not on LoCoMo, which has no summaries
    source_share: float = 0.9

    @property
    def max_score(self) -> float:
        """The highest hybrid score there is (1.8 with the defaults): the vector and keyword weights (each part
        scaled to 0..1 first) plus every neighbour weight (each lends at most a fused score of 1)."""
        return self.vector_weight + self.keyword_weight + sum(self.neighbour_weights)


def neighbour_context(
    scores: Scores,
    timeline: Timeline,
    weights: Sequence[float],
    positions: Mapping[str, tuple[int, int]] | None = None,
) -> dict[str, float]:
    """Add to each memory the best score among its neighbours at each distance d, times weights[d-1].

    A memory that answers a question often says little by itself ("Yes, last Sunday!"): the turns around it
    carry the topic. Ids missing from the timeline keep their own score and lend none."""
    where = positions if positions is not None else timeline.positions()
    best: dict[tuple[int, str], float] = {}  # (distance, id) -> best neighbour score at that distance
    for doc_id, score in scores.items():
        if score <= 0.0 or doc_id not in where:
            continue
        episode, index = where[doc_id]
        ids = timeline.episodes[episode]
        for distance in range(1, len(weights) + 1):
            for j in (index - distance, index + distance):
                if 0 <= j < len(ids) and score > best.get((distance, ids[j]), 0.0):
                    best[(distance, ids[j])] = score
    smoothed = dict(scores)
    for (distance, doc_id), score in sorted(best.items(), key=lambda item: item[0][0]):  # nearest first, so
        smoothed[doc_id] = smoothed.get(doc_id, 0.0) + weights[distance - 1] * score  # sums round one way
    return smoothed


def hybrid_scores(
    vector: Scores,
    keyword: Scores,
    timeline: Timeline,
    params: HybridParams = HybridParams(),
    positions: Mapping[str, tuple[int, int]] | None = None,
) -> dict[str, float]:
    """Fuse a vector query's top-N scores with BM25 scores, then add neighbour context.

    `vector`: id -> cosine for the top `params.vector_candidates` of a Vectorize query (min-max normalised over
    those candidates, so the N-th scores 0, as anything below it would); `keyword`: id -> BM25 score for every
    memory matching a query term (divided by the best one)."""
    fused = weighted_fusion(
        [(normalise_minmax(vector), params.vector_weight), (normalise_max(keyword), params.keyword_weight)]
    )
    return neighbour_context(fused, timeline, params.neighbour_weights, positions)


def hybrid_rank(
    vector: Scores,
    keyword: Scores,
    timeline: Timeline,
    k: int,
    params: HybridParams = HybridParams(),
    positions: Mapping[str, tuple[int, int]] | None = None,
) -> list[tuple[str, float]]:
    """The `k` best (id, hybrid score) pairs, highest first."""
    scores = hybrid_scores(vector, keyword, timeline, params, positions)
    return [(doc_id, scores[doc_id]) for doc_id in top_ids(scores, k)]


@dataclass(frozen=True, slots=True)
class HybridParts:
    """One memory's hybrid score taken apart: `vector` and `keyword` are the raw inputs (cosine, BM25), the
    `*_part` terms what each adds after normalising and weighting, `cue_lift` what query cues matched before
    neighbour context add to its own fused score, `context` what its neighbours lend, and `cue_factor` the
    multiplier of the cues matched after it (recalling/cues.py; 0.0 and 1.0 without cues)."""

    vector: float | None
    keyword: float | None
    vector_part: float
    keyword_part: float
    context: float
    cue_lift: float = 0.0
    cue_factor: float = 1.0

    @property
    def total(self) -> float:
        return (self.vector_part + self.keyword_part + self.cue_lift + self.context) * self.cue_factor


def hybrid_parts(
    vector: Scores,
    keyword: Scores,
    timeline: Timeline,
    params: HybridParams = HybridParams(),
    positions: Mapping[str, tuple[int, int]] | None = None,
    before: Mapping[str, float] | None = None,
    after: Mapping[str, float] | None = None,
) -> dict[str, HybridParts]:
    """`hybrid_scores`, each id's score split into its terms (their sum is `hybrid_scores`' score). `before` and
    `after`: query cues' multipliers by id (missing: 1), of the fused score before neighbour context and of the
    score after it, as recall applies them (hybrid_arrays.hybrid_rank)."""
    vector_norm, keyword_norm = normalise_minmax(vector), normalise_max(keyword)
    fused = weighted_fusion([(vector_norm, params.vector_weight), (keyword_norm, params.keyword_weight)])
    lifted = {i: f * before.get(i, 1.0) for i, f in fused.items()} if before else fused
    smoothed = neighbour_context(lifted, timeline, params.neighbour_weights, positions)
    return {
        doc_id: HybridParts(
            vector=vector.get(doc_id),
            keyword=keyword.get(doc_id),
            vector_part=params.vector_weight * vector_norm.get(doc_id, 0.0),
            keyword_part=params.keyword_weight * keyword_norm.get(doc_id, 0.0),
            context=total - lifted.get(doc_id, 0.0),
            cue_lift=lifted.get(doc_id, 0.0) - fused.get(doc_id, 0.0),
            cue_factor=after.get(doc_id, 1.0) if after else 1.0,
        )
        for doc_id, total in smoothed.items()
    }
