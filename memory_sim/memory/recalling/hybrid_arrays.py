"""Hybrid ranking (memory/recalling/hybrid.py) over numpy arrays: the same fusion and neighbour context, for recall.

The dict functions of hybrid.py cost a Python step per matching memory and per neighbour: ~10 ms at 10,000
memories when a query word is common. Here every memory is a *slot* (its number in the keyword index,
memory/recalling/keyword.py; a removed memory leaves a hole that nothing fills), and each step is a few numpy operations
over the candidates and their neighbours only, never over all memories but for one scatter. Same inputs, same
ranking, same float scores as `hybrid.hybrid_rank` (tests/ranking/test_hybrid_arrays.py). Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from memory_sim.memory.recalling.hybrid import HybridParams

Hits = tuple[np.ndarray, np.ndarray]  # (slots, scores): one candidate list, slots unique


@dataclass(frozen=True)
class TimelineArrays:
    """`hybrid.Timeline` over slots: `order` lists the slots episode after episode, each in remember order;
    `episode[t]` is the episode of `order[t]`; `place[slot]` is the slot's index in `order` (-1: not in the
    timeline). `size` is the number of slots, holes included."""

    order: np.ndarray
    episode: np.ndarray
    place: np.ndarray
    size: int
    _padded: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, episodes: Sequence[Sequence[int]], size: int) -> TimelineArrays:
        lengths = np.fromiter((len(e) for e in episodes), np.int64, len(episodes))
        order = np.fromiter((s for e in episodes for s in e), np.int64, int(lengths.sum()))
        place = np.full(size, -1, np.int64)
        place[order] = np.arange(order.shape[0])
        return cls(order, np.repeat(np.arange(len(episodes)), lengths), place, size)

    def padded(self, pad: int) -> tuple[np.ndarray, np.ndarray]:
        """`order` and `episode` with `pad` entries before and after, in episode -1 (slot 0, never read): a
        neighbour's place t + d needs no bounds check. Cached, as a view keeps its timeline between recalls."""
        if pad not in self._padded:
            fill = np.zeros(pad, np.int64)
            self._padded[pad] = (np.concatenate([fill, self.order, fill]),
                                 np.concatenate([fill - 1, self.episode, fill - 1]))
        return self._padded[pad]


def normalise_max(scores: np.ndarray) -> np.ndarray:
    """hybrid.normalise_max: divided by the best (all <= 0: all 0)."""
    top = scores.max(initial=0.0)
    return np.zeros_like(scores) if top <= 0.0 else np.maximum(scores, 0.0) / top


def normalise_minmax(scores: np.ndarray) -> np.ndarray:
    """hybrid.normalise_minmax: linear onto [0, 1] (all equal: all 1)."""
    if scores.size == 0:
        return scores.astype(float)
    low, high = scores.min(), scores.max()
    span = high - low
    return np.ones_like(scores, dtype=float) if span == 0 else (scores - low) / span


def neighbour_context(
    fused: np.ndarray, members: np.ndarray, timeline: TimelineArrays, weights: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """hybrid.neighbour_context for the slots `members` (those with a fused score; `fused` is over all slots, 0
    outside the members). Returns (slots that end with a score, their scores): the members and every slot a
    positive member lends to, each adding at each distance d its best neighbour's score times weights[d-1],
    never across an episode boundary. Only the members and their neighbours are visited."""
    places = timeline.place[members]
    placed = places[places >= 0]
    lenders = places[(places >= 0) & (fused[members] > 0.0)]
    length = timeline.order.shape[0]
    member_at = np.zeros(length, dtype=bool)  # by place in the timeline; marks, not np.unique: 10x faster here
    member_at[placed] = True
    near = member_at.copy()
    for d in range(1, len(weights) + 1):
        near[lenders[lenders >= d] - d] = True
        near[lenders[lenders < length - d] + d] = True
    around = np.flatnonzero(near)
    scores = fused[timeline.order[around]]
    order, episode = timeline.padded(len(weights))
    own = episode[around + len(weights)]
    lent = np.zeros(around.shape[0], dtype=bool)
    for distance, weight in enumerate(weights, start=1):
        best = np.zeros(around.shape[0])
        for other in (around + len(weights) - distance, around + len(weights) + distance):
            value = np.where(episode[other] == own, fused[order[other]], 0.0)
            np.maximum(best, value, out=best)  # only a positive score lends: best starts at 0
        scores = scores + weight * best
        lent |= best > 0.0
    outside = members[places < 0]  # in no episode: keeps its own score, lends nothing
    keep = lent | member_at[around]
    return (np.concatenate([timeline.order[around[keep]], outside]),
            np.concatenate([scores[keep], fused[outside]]))


_DEFAULTS = HybridParams()


Factors = Callable[[np.ndarray], np.ndarray]  # slots -> a multiplier of each one's score


def hybrid_rank(
    vector: Hits, keyword: Hits, timeline: TimelineArrays, k: int, ids: Sequence[str | None],
    params: HybridParams = _DEFAULTS, before: Factors | None = None, after: Factors | None = None,
) -> list[tuple[int, float]]:
    """hybrid.hybrid_rank over slots: the `k` best (slot, score), highest first, ties by id (`ids[slot]`).
    `before` and `after` (query cues, recalling/cues.py): multipliers of the fused scores before neighbour context
    and of the final scores after it; without them the ranking is hybrid.hybrid_rank's exactly."""
    fused = np.zeros(timeline.size)
    fused[vector[0]] += params.vector_weight * normalise_minmax(vector[1])  # 0.0 + x, as the dict version adds
    fused[keyword[0]] += params.keyword_weight * normalise_max(keyword[1])
    marked = np.zeros(timeline.size, dtype=bool)
    marked[vector[0]] = True
    marked[keyword[0]] = True
    members = np.flatnonzero(marked)
    if before is not None:
        fused[members] *= before(members)
    slots, scores = neighbour_context(fused, members, timeline, params.neighbour_weights)
    if after is not None:
        scores = scores * after(slots)
    return top_slots(slots, scores, k, ids)


def top_slots(slots: np.ndarray, scores: np.ndarray, k: int, ids: Sequence[str | None]) -> list[tuple[int, float]]:
    """hybrid.top_ids: highest score first, ties by id."""
    if k <= 0:
        return []
    if slots.shape[0] > k:
        kth = -np.partition(-scores, k - 1)[k - 1]
        chosen = scores >= kth  # every slot tied with the k-th stays: the id decides among them
        slots, scores = slots[chosen], scores[chosen]
    ranked = sorted(zip(scores.tolist(), slots.tolist(), strict=True), key=lambda item: (-item[0], ids[item[1]]))[:k]
    return [(s, v) for v, s in ranked]
