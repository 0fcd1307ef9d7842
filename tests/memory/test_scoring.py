"""Pure scoring, decay and pruning."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_sim.memory.models import MemoryConfig, Recollection, StoredMemory
from memory_sim.memory.scoring import (
    capped_by_sources,
    distinct,
    generative_agents_scores,
    grow_decay,
    plan_cap_prune,
    plan_decay,
    rank_by_score,
    rank_weighted,
    retry_delay_s,
    text_key,
    weighted_score,
    yield_to_sources,
)

CONFIG = MemoryConfig()


def stored(id: str, importance: float, day: int, decay: float = 0.05, state: str = "indexed", decayed: int | None = None) -> StoredMemory:
    return StoredMemory(id, "margaret", f"text {id}", importance, day, 12, "event", "observation", decay, state, 0.0,
                        day if decayed is None else decayed)


def test_weighted_score_is_the_design_formula() -> None:
    assert weighted_score(0.8, 0.5, current_day=10, day=4, decay_factor=0.25) == pytest.approx(0.8 * 0.5 / (1 + 6 * 0.25))
    assert weighted_score(0.8, 0.5, current_day=3, day=4, decay_factor=0.25) == pytest.approx(0.4)  # no future bonus


@settings(max_examples=50, deadline=None)
@given(st.floats(0.01, 1), st.floats(0.01, 1), st.integers(0, 100), st.floats(0.001, 1))
def test_older_memories_never_score_higher(score: float, importance: float, age: int, decay: float) -> None:
    assert weighted_score(score, importance, 100 + age + 1, 100, decay) <= weighted_score(score, importance, 100 + age, 100, decay)


def test_important_memories_decay_more_slowly() -> None:
    assert grow_decay(0.05, 0.95, 10, CONFIG) < grow_decay(0.05, 0.2, 10, CONFIG)
    assert grow_decay(0.95, 0.0, 100, CONFIG) == 1.0


def test_plan_decay_reembeds_important_and_drops_the_rest_past_threshold() -> None:
    faded_important = stored("a", 0.9, 0, decay=0.89)
    faded_plain = stored("b", 0.75, 0, decay=0.89)
    fresh = stored("c", 0.75, 0, decay=0.05)
    plan = plan_decay([faded_important, faded_plain, fresh], current_day=1, config=CONFIG)
    assert plan.reembed == ["a"] and plan.unindex == ["b"]
    assert plan.factors["a"] == CONFIG.initial_decay
    assert plan.factors["c"] > 0.05


def test_plan_decay_is_a_no_op_for_a_day_already_done() -> None:
    assert plan_decay([stored("a", 0.5, 0, decayed=3)], current_day=3, config=CONFIG).factors == {}


def test_cap_prune_drops_lowest_value_first_down_to_headroom() -> None:
    config = MemoryConfig(index_cap=4, cap_headroom=0.5)
    rows = [stored("old-dull", 0.71, 0, 0.5), stored("new-vivid", 0.95, 9), stored("old-vivid", 0.95, 0, 0.5),
            stored("new-dull", 0.71, 9)]
    drop = plan_cap_prune(rows, current_day=10, incoming=1, config=config)
    assert drop == ["old-dull", "old-vivid", "new-dull"]  # keeps floor(4 * 0.5) - 1 = 1
    assert plan_cap_prune(rows[:3], current_day=10, incoming=1, config=config) == []


def test_retry_backoff_doubles_and_caps() -> None:
    delays = [retry_delay_s(n, CONFIG) for n in (1, 2, 3, 10)]
    assert delays[:3] == [3600.0, 7200.0, 14400.0] and delays[3] == CONFIG.retry_max_s


def test_rank_weighted_is_deterministic_on_ties() -> None:
    a = Recollection("b", "x", "t", 0.5, 1, "event", 0.5, effective_score=0.2)
    b = Recollection("a", "x", "t", 0.5, 1, "event", 0.5, effective_score=0.2)
    assert [r.id for r in rank_weighted([a, b], 2)] == ["a", "b"]


def test_a_summary_ranks_no_higher_than_its_best_source() -> None:
    """A day's summary of a relevant memory (importance 0.6) and an unrelated important one (0.95) has the mean
    importance 0.8 and the relevant sentence's match: uncapped it would rank first, and its relevant source would
    collapse into it, pushing out another memory that answers (c)."""

    def weighted(i: str, score: float, importance: float, sources: tuple[str, ...] = ()) -> Recollection:
        kind = "summary" if sources else "observation"
        return Recollection(i, "x", f"text {i}", importance, 1, "opinion", score, kind=kind, sources=sources,
                            effective_score=weighted_score(score, importance, 1, 1, 0.05))

    summary, relevant = weighted("s", 0.9, 0.8, ("a", "b")), weighted("a", 0.8, 0.6)
    unrelated = weighted("b", 0.1, 0.95)
    other = weighted("c", 0.7, 0.75)
    ranked = rank_weighted([summary, relevant, unrelated, other], 4)
    assert [r.id for r in distinct(ranked)] == ["c", "s"]  # the summary stands for "a", after "c"
    capped = {r.id: r.effective_score for r in capped_by_sources([summary, relevant, unrelated, other])}
    assert capped["s"] == pytest.approx(0.8 * 0.6) and capped["a"] == relevant.effective_score
    alone = capped_by_sources([summary, other])  # its sources out of the candidates (forgotten, or less relevant)
    assert alone[0].effective_score == summary.effective_score


def test_a_summary_yields_to_a_source_scoring_nearly_as_well() -> None:
    """A topic summary leads its sources by keyword matches its sentences add up (1.0 against 0.93, as in the
    village's "What does Margaret think of Rose?"). Kept, it fills one of the top 3 for both and lets "d" in;
    yielding, its sources fill two. A clear lead, or sources not among the candidates, keeps the summary."""

    def scored(i: str, score: float, sources: tuple[str, ...] = ()) -> Recollection:
        return Recollection(i, "x", f"text {i}", 0.5, 1, "opinion", score, kind="summary" if sources else "observation",
                            sources=sources)

    summary, a, b = scored("s", 1.0, ("a", "b")), scored("a", 0.93), scored("b", 0.91)
    others = [scored("c", 0.95), scored("d", 0.5)]
    candidates = [summary, a, b, *others]
    assert [r.id for r in distinct(rank_by_score(candidates, 5))][:3] == ["s", "c", "d"]  # one slot for a and b
    assert [r.id for r in distinct(rank_by_score(yield_to_sources(candidates, 0.9), 5))][:3] == ["c", "a", "b"]
    clear_lead = [summary, scored("a", 0.6), scored("b", 0.5), *others]
    assert [r.id for r in yield_to_sources(clear_lead, 0.9)] == [r.id for r in clear_lead]
    assert [r.id for r in yield_to_sources([summary, *others], 0.9)] == ["s", "c", "d"]  # its sources absent
    assert yield_to_sources([], 0.9) == []


def test_generative_agents_scores_favour_recent_relevant_important() -> None:
    best = Recollection("best", "x", "t", 0.9, 1, "event", 0.9)
    worst = Recollection("worst", "x", "t", 0.1, 1, "event", 0.1)
    scores = generative_agents_scores([best, worst], current_hours=100, hours_of={"best": 99, "worst": 1})
    assert scores == [pytest.approx(5.5), pytest.approx(0.0)]


def test_distinct_keeps_the_better_ranked_of_each_repeat() -> None:
    def r(i: str, text: str, sources: tuple[str, ...] = ()) -> Recollection:
        return Recollection(i, "x", text, 0.5, 1, "event", 0.5, kind="summary" if sources else "observation", sources=sources)

    ranked = [r("a", "Tom fixed the oven."), r("b", "tom fixed  the oven!"), r("s", "Tom fixed the oven. Rain.", ("a", "c")),
              r("c", "Rain."), r("d", "Bread."), r("t", "Bread. Ale.", ("d", "e")), r("e", "Ale.")]
    assert [x.id for x in distinct(ranked)] == ["a", "c", "d", "e"]  # same text, summary after its source
    summary_first = [r("s", "Tom fixed the oven. Rain.", ("a", "c")), r("a", "Tom fixed the oven."), r("c", "Rain."),
                     r("d", "Bread.")]
    assert [x.id for x in distinct(summary_first)] == ["s", "d"]  # its sources after it
    assert distinct([]) == []
    assert text_key("  Tom, FIXED the oven! ") == text_key("tom fixed the oven") == "tom fixed the oven"
