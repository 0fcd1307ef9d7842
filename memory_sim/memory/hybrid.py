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
