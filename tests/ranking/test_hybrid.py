"""Fusion and neighbour context: pure functions on small hand-made inputs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_sim.memory.recalling.hybrid import (
    HybridParams,
    Timeline,
    hybrid_rank,
    neighbour_context,
    normalise_max,
    normalise_minmax,
    reciprocal_rank_fusion,
    top_ids,
    weighted_fusion,
)


def test_rrf_sums_reciprocal_ranks() -> None:
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "c"]], k=60)
    assert fused == {"a": pytest.approx(1 / 61), "b": pytest.approx(1 / 62 + 1 / 61), "c": pytest.approx(1 / 62)}
    assert top_ids(fused, 2) == ["b", "a"]


def test_normalisations() -> None:
    assert normalise_max({"a": 4.0, "b": 1.0}) == {"a": 1.0, "b": 0.25}
    assert normalise_max({"a": 0.0}) == {"a": 0.0}
    assert normalise_minmax({"a": 0.8, "b": 0.4, "c": 0.6}) == pytest.approx({"a": 1.0, "b": 0.0, "c": 0.5})
    assert normalise_minmax({"a": 0.3, "b": 0.3}) == {"a": 1.0, "b": 1.0}
    assert normalise_minmax({}) == {}


def test_weighted_fusion_treats_missing_as_zero() -> None:
    fused = weighted_fusion([({"a": 1.0, "b": 0.5}, 0.3), ({"b": 1.0, "c": 0.2}, 0.7)])
    assert fused == pytest.approx({"a": 0.3, "b": 0.85, "c": 0.14})


def test_neighbour_context_adds_best_neighbour_per_distance_within_an_episode() -> None:
    timeline = Timeline.of([["a", "b", "c", "d"], ["e", "f"]])
    smoothed = neighbour_context({"b": 1.0, "d": 0.4, "e": 0.8}, timeline, (0.5, 0.25))
    assert smoothed == pytest.approx({
        "a": 0.5 * 1.0,                    # b at distance 1
        "b": 1.0 + 0.25 * 0.4,             # d at distance 2
        "c": 0.5 * 1.0,                    # best of b (1.0) and d (0.4) at distance 1
        "d": 0.4 + 0.25 * 1.0,             # b at distance 2
        "e": 0.8,                          # c-d never lend across the episode boundary
        "f": 0.5 * 0.8,
    })


def test_ids_outside_the_timeline_keep_their_score() -> None:
    assert neighbour_context({"x": 0.7}, Timeline.of([["a"]]), (0.5,)) == {"x": 0.7}


def test_hybrid_lifts_a_terse_answer_next_to_the_question_that_names_the_topic() -> None:
    # "Did you adopt a puppy?" / "Yes, last Sunday!": the answer shares no word with the query.
    timeline = Timeline.of([["q1", "a1", "x2", "x3", "x1"]])
    vector = {"q1": 0.62, "x1": 0.50, "a1": 0.40, "x2": 0.30, "x3": 0.10}
    keyword = {"q1": 3.0, "x1": 1.0}
    ranked = [doc_id for doc_id, _ in hybrid_rank(vector, keyword, timeline, k=3)]
    assert ranked[:2] == ["q1", "a1"]
    no_context = HybridParams(neighbour_weights=())
    assert [d for d, _ in hybrid_rank(vector, keyword, timeline, 3, no_context)][:2] == ["q1", "x1"]


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0.0, 10.0), max_size=8),
       st.dictionaries(st.sampled_from("abcdefgh"), st.floats(-1.0, 1.0), max_size=8))
def test_hybrid_scores_are_bounded_and_cover_all_candidates(keyword: dict, vector: dict) -> None:
    timeline = Timeline.of([list("abcd"), list("efgh")])
    params = HybridParams()
    ranked = dict(hybrid_rank(vector, keyword, timeline, k=8, params=params))
    ceiling = (params.vector_weight + params.keyword_weight) * (1 + sum(params.neighbour_weights))
    assert all(0.0 <= s <= ceiling + 1e-9 for s in ranked.values())
    assert set(vector) | set(keyword) <= set(ranked)  # only 8 ids exist, so k=8 keeps every candidate
