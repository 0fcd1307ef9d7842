"""Retrieval metrics shared by the evaluations. Pure functions.

recall@k: the share of a question's gold memories found in the top k; hit@k: 1 when any gold memory is in the
top k. Both are averaged over questions.

Session level (LoCoMo's coarser unit, the one many published tables use): a retrieved memory counts for the
session it belongs to. session hit@k: 1 when any of the top k lies in a session holding gold evidence (a question
is found when a retrieved turn is in an evidence session); session recall@k: the share of the question's evidence
sessions reached by the top k. Turn-level figures are never comparable with session-level ones.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence

KS = (1, 5, 10)


def question_scores(ranked: Sequence[str], gold: Iterable[str], ks: Sequence[int] = KS) -> dict[str, float]:
    wanted = set(gold)
    if not wanted:
        raise ValueError("a scored question needs at least one gold memory")
    out = {f"recall@{k}": len(wanted & set(ranked[:k])) / len(wanted) for k in ks}
    out.update({f"hit@{k}": float(bool(wanted & set(ranked[:k]))) for k in ks})
    return out


def session_scores(
    ranked: Sequence[str], gold: Iterable[str], session_of: Callable[[str], str], ks: Sequence[int] = KS
) -> dict[str, float]:
    """Session-level `session_recall@k` and `session_hit@k` (module docstring); `session_of(id)` names the
    session a memory belongs to."""
    wanted = {session_of(i) for i in gold}
    if not wanted:
        raise ValueError("a scored question needs at least one gold memory")
    reached = [session_of(i) for i in ranked]
    out = {f"session_recall@{k}": len(wanted & set(reached[:k])) / len(wanted) for k in ks}
    out.update({f"session_hit@{k}": float(bool(wanted & set(reached[:k]))) for k in ks})
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
