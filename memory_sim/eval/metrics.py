"""Retrieval metrics shared by the evaluations. Pure functions.

recall@k: the share of a question's gold memories found in the top k; hit@k: 1 when any gold memory is in the
top k. Both are averaged over questions.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence

KS = (1, 5, 10)


def question_scores(ranked: Sequence[str], gold: Iterable[str], ks: Sequence[int] = KS) -> dict[str, float]:
    wanted = set(gold)
    if not wanted:
        raise ValueError("a scored question needs at least one gold memory")
    out = {f"recall@{k}": len(wanted & set(ranked[:k])) / len(wanted) for k in ks}
    out.update({f"hit@{k}": float(bool(wanted & set(ranked[:k]))) for k in ks})
    return out


def mean_scores(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Means of each metric over the rows, plus their count as `questions`."""
    if not rows:
        return {"questions": 0}
    return {key: round(statistics.fmean(r[key] for r in rows), 4) for key in rows[0]} | {"questions": len(rows)}


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (share in 0..1); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered) + 0.5) - 1))]


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {"p50_ms": round(percentile(ms, 0.5), 2), "p95_ms": round(percentile(ms, 0.95), 2), "n": len(ms)}
