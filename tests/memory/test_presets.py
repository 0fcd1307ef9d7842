"""Weighted recall's scoring presets (memory/recalling/presets.py): each formula pinned on constructed candidates whose
orders and values were worked out by hand, and the presets through `MemorySystem.weighted_recall`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_sim.cli import main
from memory_sim.env import Env
from memory_sim.errors import InvalidInput
from memory_sim.memory.models import Recollection, ShortTermMemory, WorldTime
from memory_sim.memory.recalling import access
from memory_sim.memory.recalling.presets import SCORINGS, Moment, check_scoring, preset_scores
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

NOW = 100  # game hours: day 4, 04:00


def cand(id: str, relevance: float, importance: float, day: int) -> Recollection:
    return Recollection(id, "npc", id, importance, day, "event", relevance, decay_factor=0.1)


# x: most relevant, unimportant, oldest; y: irrelevant, most important, newest; z: between in all three.
X, Y, Z = cand("x", 1.0, 0.0, 0), cand("y", 0.0, 1.0, 4), cand("z", 0.6, 0.6, 2)
HAPPENED = {"x": Moment(0), "y": Moment(100), "z": Moment(60)}


def order(scores: list[float]) -> list[str]:
    return [c.id for _, c in sorted(zip(scores, (X, Y, Z), strict=True), key=lambda p: -p[0])]


def test_design_is_score_times_importance_over_age() -> None:
    scores = preset_scores("design", [X, Y, Z], current_day=4, now_hours=NOW)
    # x 1.0*0.0/(1+4*0.1) = 0; y 0.0*1.0/1 = 0; z 0.6*0.6/(1+2*0.1) = 0.3
    assert scores == [pytest.approx(0.0), pytest.approx(0.0), pytest.approx(0.3)]


def test_paper_sums_three_min_max_normalised_terms_with_weights_one() -> None:
    scores = preset_scores("generative-agents-paper", [X, Y, Z], 4, NOW, HAPPENED)
    # recency 0.995**hours: x 0.995**100 = 0.605770 (min -> 0), y 1 (max -> 1),
    # z 0.995**40 = 0.818320 -> (0.818320 - 0.605770) / (1 - 0.605770) = 0.539153
    # x 0 + 1 + 0 = 1; y 1 + 0 + 1 = 2; z 0.539153 + 0.6 + 0.6 = 1.739153
    assert scores == [pytest.approx(1.0), pytest.approx(2.0), pytest.approx(1.739153, abs=1e-6)]
    assert order(scores) == ["y", "z", "x"]


def test_code_weighs_recency_half_relevance_three_importance_two() -> None:
    scores = preset_scores("generative-agents-code", [X, Y, Z], 4, NOW, HAPPENED)
    # recency 0.99**hours: x 0.99**100 = 0.366032 -> 0, y -> 1, z 0.99**40 = 0.668972 -> 0.477848
    # x 0 + 3*1 + 0 = 3; y 0.5 + 0 + 2 = 2.5; z 0.5*0.477848 + 3*0.6 + 2*0.6 = 3.238924
    assert scores == [pytest.approx(3.0), pytest.approx(2.5), pytest.approx(3.238924, abs=1e-6)]
    assert order(scores) == ["z", "x", "y"]


def test_code_counts_recency_from_the_last_recall_and_the_paper_does_not() -> None:
    recalled = HAPPENED | {"x": Moment(0, recalled=100)}  # x, the oldest, was recalled just now
    code = preset_scores("generative-agents-code", [X, Y, Z], 4, NOW, recalled)
    # recency: x 1, y 1, z 0.668972 (now the min) -> 0: x 0.5 + 3 = 3.5; y 0.5 + 2 = 2.5; z 1.8 + 1.2 = 3.0
    assert code == [pytest.approx(3.5), pytest.approx(2.5), pytest.approx(3.0)]
    assert order(code) == ["x", "z", "y"]
    assert preset_scores("generative-agents-paper", [X, Y, Z], 4, NOW, recalled) == preset_scores(
        "generative-agents-paper", [X, Y, Z], 4, NOW, HAPPENED)


def test_equal_terms_count_half_and_unknown_hours_are_the_days_start() -> None:
    twins = [cand("a", 0.5, 0.5, 1), cand("b", 0.5, 0.5, 1)]
    assert preset_scores("generative-agents-paper", twins, 4, NOW) == [pytest.approx(1.5)] * 2  # 0.5 + 0.5 + 0.5
    assert preset_scores("generative-agents-code", twins, 4, NOW) == [pytest.approx(2.75)] * 2  # 0.25 + 1.5 + 1


def test_an_unknown_preset_is_refused_in_one_line() -> None:
    assert check_scoring("design") == "design"
    with pytest.raises(InvalidInput, match="^scoring must be one of design, generative-agents-paper, "
                                           "generative-agents-code, got 'recency'$"):
        check_scoring("recency")


@pytest.fixture
def village(system: MemorySystem, clock: SimClock) -> MemorySystem:
    texts = [("old", "The smith mended my oven door.", 0.9, 0, 8), ("new", "The smith sold me a nail.", 0.75, 3, 20),
             ("mid", "The smith mended the mill gate.", 0.8, 2, 6)]
    for id, text, importance, day, hour in texts:
        system.remember(ShortTermMemory("meg", text, importance, WorldTime(day, hour), id=id))
    clock.advance_to(WorldTime(4, 4))
    return system


@pytest.mark.parametrize("scoring", SCORINGS)
def test_weighted_recall_ranks_by_the_preset_and_records_last_access(
    village: MemorySystem, env: Env, scoring: str
) -> None:
    query = "the smith mended"
    plain = village.recall("meg", query, top_k=3)
    found = village.weighted_recall("meg", query, top_k=3, scoring=scoring)  # type: ignore[arg-type]
    moments = access.moments(env.DB, ["old", "new", "mid"])
    assert {i: m.hours for i, m in moments.items()} == {"old": 8, "new": 92, "mid": 54}
    assert all(m.recalled == NOW for m in moments.values())  # recalled at day 4, 04:00
    before = {i: Moment(m.hours) for i, m in moments.items()}
    expected = preset_scores(scoring, plain, 4, NOW, before)  # type: ignore[arg-type]
    by_id = dict(zip([r.id for r in plain], expected, strict=True))
    assert [r.effective_score for r in found] == [pytest.approx(by_id[r.id]) for r in found]
    assert [r.id for r in found] == sorted(by_id, key=lambda i: -by_id[i])


def test_weighted_recall_refuses_an_unknown_preset_and_writes_nothing(village: MemorySystem, env: Env) -> None:
    with pytest.raises(InvalidInput, match="^scoring must be one of"):
        village.weighted_recall("meg", "the smith", scoring="newest")  # type: ignore[arg-type]
    assert access.snapshot(env.DB) == {}


def test_snapshot_and_restore_put_last_access_back(village: MemorySystem, env: Env) -> None:
    village.weighted_recall("meg", "oven door", top_k=1)
    kept = access.snapshot(env.DB)
    village.weighted_recall("meg", "the smith", top_k=3, current_day=9)
    assert access.snapshot(env.DB) != kept
    access.restore(env.DB, kept)
    assert access.snapshot(env.DB) == kept and len(kept) == 1


def test_cli_recall_scoring_ranks_by_the_preset_and_needs_weighted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "data")
    fake = ["--data", data, "--model", "fake/hashing"]
    assert main(["remember", "margaret", "Tom fixed my fence", "--importance", "0.9", "--day", "1", *fake]) == 0
    assert main(["remember", "margaret", "Tom sold me a fence post", "--importance", "0.8", "--day", "3", *fake]) == 0
    capsys.readouterr()
    assert main(["recall", "margaret", "fence", "--weighted", "--scoring", "generative-agents-paper", "--json",
                 "--day", "5", *fake]) == 0
    rows = json.loads(capsys.readouterr().out)
    # two candidates, each term min-max normalised to 0 and 1: the older is more important, the newer more recent,
    # so the more relevant scores 1 + 1 and the other 1 + 0
    assert [round(r["effectiveScore"], 6) for r in rows] == [2.0, 1.0]
    assert main(["recall", "margaret", "fence", "--scoring", "generative-agents-code", *fake]) == 2
    assert "--scoring only counts with --weighted" in capsys.readouterr().err
    assert main(["recall", "margaret", "fence", "--weighted", "--scoring", "newest", *fake]) == 2
    assert "invalid choice: 'newest'" in capsys.readouterr().err
