"""The array ranking equals the dict ranking of hybrid.py: same ids, same order, same float scores."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_sim.memory.recalling import hybrid, hybrid_arrays
from memory_sim.memory.recalling.hybrid import HybridParams, Timeline
from memory_sim.memory.recalling.hybrid_arrays import Hits, TimelineArrays

SCORES = st.one_of(st.floats(0.0, 10.0), st.sampled_from([0.0, 0.5, 1.0, 2.0]))  # ties are common


@st.composite
def worlds(draw: st.DrawFn) -> tuple:
    """Slots 0..size-1, some of them holes; episodes of (most of) the others in a shuffled remember order; two
    hit lists."""
    size = draw(st.integers(1, 30))
    holes = set(draw(st.lists(st.integers(0, size - 1), max_size=size // 3)))
    live = [s for s in draw(st.permutations(range(size))) if s not in holes]
    cuts = sorted(set(draw(st.lists(st.integers(0, len(live)), max_size=5))))
    episodes = [live[a:b] for a, b in zip([0, *cuts], [*cuts, len(live)]) if live[a:b]]
    if episodes and draw(st.booleans()):
        episodes.pop()  # its slots can still be hits: in no episode, they keep their score and lend none
    ids = [None if s in holes else f"m{draw(st.integers(0, 99)):02d}-{s}" for s in range(size)]
    vector = draw(st.dictionaries(st.sampled_from(live), st.floats(-1.0, 1.0), max_size=12)) if live else {}
    keyword = draw(st.dictionaries(st.sampled_from(live), SCORES, max_size=12)) if live else {}
    return size, episodes, ids, vector, keyword


def hits(scores: dict[int, float]) -> Hits:
    return np.fromiter(scores, np.int64, len(scores)), np.fromiter(scores.values(), float, len(scores))


@settings(max_examples=300, deadline=None)
@given(worlds(), st.integers(1, 12), st.sampled_from([HybridParams(), HybridParams(neighbour_weights=()),
                                                      HybridParams(0.5, 0.5, (0.7, 0.2, 0.1))]))
def test_array_ranking_equals_the_dict_ranking(world: tuple, k: int, params: HybridParams) -> None:
    size, episodes, ids, vector, keyword = world
    timeline = Timeline.of([[ids[s] for s in e] for e in episodes])
    want = hybrid.hybrid_rank({ids[s]: v for s, v in vector.items()}, {ids[s]: v for s, v in keyword.items()},
                              timeline, k, params)
    got = hybrid_arrays.hybrid_rank(hits(vector), hits(keyword), TimelineArrays.of(episodes, size), k, ids, params)
    assert [(ids[s], score) for s, score in got] == want


def test_neighbours_lend_within_an_episode_only_and_holes_stay_out() -> None:
    # slots 0..6; slot 2 is a hole; episodes [1, 0, 3] and [4, 5]; slot 6 is in no episode
    timeline = TimelineArrays.of([[1, 0, 3], [4, 5]], 7)
    fused = np.array([0.0, 1.0, 0.0, 0.4, 0.8, 0.0, 0.9])
    slots, scores = hybrid_arrays.neighbour_context(fused, np.array([1, 3, 4, 6]), timeline, (0.5, 0.25))
    assert dict(zip(slots.tolist(), scores.tolist())) == {
        0: 0.5 * 1.0, 1: 1.0 + 0.25 * 0.4, 3: 0.4 + 0.25 * 1.0, 4: 0.8, 5: 0.5 * 0.8, 6: 0.9,
    }


def test_ties_at_the_cut_are_broken_by_id() -> None:
    timeline = TimelineArrays.of([[0], [1], [2], [3]], 4)
    ids = ["d", "c", "b", "a"]
    keyword = (np.array([0, 1, 2, 3]), np.array([1.0, 1.0, 1.0, 2.0]))
    ranked = hybrid_arrays.hybrid_rank((np.zeros(0, np.int64), np.zeros(0)), keyword, timeline, 2, ids)
    assert [ids[s] for s, _ in ranked] == ["a", "b"]
