"""The ranking rule (memory/beliefs/ranking.py): a correction takes the place of the belief it corrects, newest
first, the history kept and marked; nothing else moves."""

from __future__ import annotations

from memory_sim.memory.beliefs.ranking import by_effective_score, lift_effective_score, newest_first
from memory_sim.memory.models import Recollection


def rec(id: str, score: float, day: int = 1, effective: float | None = None) -> Recollection:
    return Recollection(id, "tom", id, 0.8, day, "event", score, effective_score=effective)


def test_the_correction_takes_the_stale_beliefs_place_and_its_score() -> None:
    ranked = [rec("owes", 0.99), rec("weather", 0.5), rec("paid", 0.2, day=9)]
    out = newest_first(ranked, {"owes": "paid"})
    assert [r.id for r in out] == ["paid", "owes", "weather"]
    assert [r.score for r in out] == [0.99, 0.99, 0.5]  # still highest first
    assert [r.superseded_by for r in out] == [None, "paid", None]


def test_a_chain_goes_newest_first_and_a_correction_already_above_stays() -> None:
    ranked = [rec("a", 0.9), rec("b", 0.8), rec("x", 0.7), rec("c", 0.1)]
    assert [r.id for r in newest_first(ranked, {"a": "b", "b": "c"})] == ["c", "b", "a", "x"]
    ranked = [rec("new", 0.9), rec("x", 0.8), rec("old", 0.7)]
    assert [r.id for r in newest_first(ranked, {"old": "new"})] == ["new", "x", "old"]


def test_a_correction_outside_the_ranking_only_marks_the_stale_one() -> None:
    out = newest_first([rec("owes", 0.9), rec("x", 0.5)], {"owes": "paid-elsewhere"})
    assert [(r.id, r.superseded_by) for r in out] == [("owes", "paid-elsewhere"), ("x", None)]


def test_weighted_rankings_lift_the_effective_score() -> None:
    ranked = [rec("owes", 1.0, effective=0.643), rec("paid", 0.567, day=9, effective=0.432)]
    out = newest_first(ranked, {"owes": "paid"}, by_effective_score, lift_effective_score)
    assert [(r.id, r.effective_score, r.score) for r in out] == [("paid", 0.643, 0.567), ("owes", 0.643, 1.0)]


def test_nothing_superseded_leaves_the_ranking_as_it_was() -> None:
    ranked = [rec("a", 0.9), rec("b", 0.8)]
    assert newest_first(ranked, {}) == ranked


def test_a_correction_below_the_window_trades_places_with_the_stale_one() -> None:
    ranked = [rec("owes", 0.9), rec("x", 0.8), rec("y", 0.7), rec("paid", 0.1, day=9)]
    out = newest_first(ranked, {"owes": "paid"}, window=2)
    assert [r.id for r in out] == ["paid", "x", "owes", "y"]  # x, which answers too, stays in the top 2
    assert [r.score for r in out[:2]] == [0.9, 0.8] and out[2].superseded_by == "paid"
    ranked = [rec("owes", 0.9), rec("paid", 0.5, day=9), rec("x", 0.4)]
    assert [r.id for r in newest_first(ranked, {"owes": "paid"}, window=2)] == ["paid", "owes", "x"]
