"""Questions about time rank the memories of that time first, in every mode (memory/recalling/timing.py,
placing.py): the issue's observations ("yesterday" asked on day 15, "on day 12", "after he came back from a
trip") and their siblings, with the hashing embedder; the score shown is the score that ordered the list."""

from __future__ import annotations

from dataclasses import replace

import pytest
from fortnight import MODES, ask, remember_fortnight

from memory_sim.memory.models import Recollection, ShortTermMemory, WorldTime
from memory_sim.memory.recalling.timing import TimeFrame, rank_in_time
from memory_sim.memory.recalling.when import DaySpan
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock


@pytest.fixture
def ada(clock: SimClock) -> MemorySystem:  # clock: tests/memory/conftest.py's
    return remember_fortnight(clock)


@pytest.mark.parametrize("mode", MODES)
def test_the_morning_of_a_day_ranks_that_morning_first(ada: MemorySystem, mode: str) -> None:
    found = ask(ada, "What happened on the evening of day 12?", mode)
    assert [r.id for r in found[:2]] == ["day12-b", "day12-a"]


@pytest.mark.parametrize("mode", MODES)
def test_before_an_event_ranks_what_came_just_before_it(ada: MemorySystem, mode: str) -> None:
    """A memory right before the event first (the nearest a little ahead), never the event itself."""
    found = [r.id for r in ask(ada, "What did she do just before Cole left on his trip?", mode)]
    assert found[0] in {"cole-d02", "cole-d01"}
    assert found.index("trip-leave") in (1, 2)


@pytest.mark.parametrize("mode", MODES)
def test_now_anchors_relative_time_elsewhere(ada: MemorySystem, mode: str) -> None:
    """A caller asking as of day 7 (Cloudflare Agent Memory's `referenceDate`): "yesterday" is day 6."""
    found = ask(ada, "What happened yesterday?", mode, now=WorldTime(7, 12))
    assert {r.id for r in found[:2]} == {"after-trip", "cole-d06"}


def test_a_memory_kept_in_d1_only_is_found_by_its_day(ada: MemorySystem, clock: SimClock) -> None:
    """Importance 0.4 never reaches the index; asked about its day, vector recall still finds it (from D1)."""
    ada.remember(ShortTermMemory("ada", "A crow stole a bun from the windowsill.", 0.4, WorldTime(15, 9), id="crow"))
    for mode in MODES:
        assert "crow" in [r.id for r in ask(ada, "What did I see this morning?", mode)[:2]], mode


# Not vector: the hashing embedder's cosine does not tell the trip memories from the others (real-model figures for
# every mode: benchmarks/temporal.md)
@pytest.mark.parametrize("mode", ["keyword", "hybrid", "weighted"])
def test_the_last_and_the_first_time(ada: MemorySystem, mode: str) -> None:
    assert ask(ada, "The last time Cole went on a trip to the coast, what happened?", mode)[0].id == "trip-back"
    assert ask(ada, "What happened the first time Cole went on a trip to the coast?", mode)[0].id == "trip-leave"


def test_decision_context_reads_time_too(ada: MemorySystem, clock: SimClock) -> None:
    """A decision's situation that names a time ranks that time's memories first, kept in D1 only included."""
    ada.remember(ShortTermMemory("ada", "The bridge to the mill is flooded.", 0.4, WorldTime(15, 7), id="flood"))
    assert ada.decision_context("ada", "This morning I heard something: should I walk to the mill?")[0].id == "flood"


def test_a_question_without_time_words_ranks_as_before(ada: MemorySystem) -> None:
    found = ada.recall("ada", "the juggler outside the inn", mode="hybrid")
    assert found[0].id == "day12-b"
    assert found[0].score < 3.0  # no time boost: the mode's own score


def memory(memory_id: str, day: int, score: float, hour: int = 12) -> Recollection:
    return Recollection(memory_id, "ada", memory_id, 0.8, day, "event", score, hour=hour)


def test_rank_in_time_puts_the_span_above_better_matches_elsewhere() -> None:
    ranked = [memory("elsewhere", 3, 0.9), memory("beside", 11, 0.8), memory("inside", 12, 0.1)]
    frame = TimeFrame(WorldTime(15, 12).hours, DaySpan(12, 12))
    out = rank_in_time(ranked, frame, weighted=False)
    assert [r.id for r in out] == ["inside", "beside", "elsewhere"]
    assert [r.score for r in out] == sorted((r.score for r in out), reverse=True)


def test_rank_in_time_gives_a_memory_from_after_now_no_boost() -> None:
    ranked = [memory("later", 16, 1.0), memory("earlier", 2, 0.5)]
    frame = TimeFrame(WorldTime(15, 12).hours, DaySpan(0, 20, slack=0))
    assert [r.id for r in rank_in_time(ranked, frame, weighted=False)] == ["earlier", "later"]


def test_rank_in_time_after_an_event_nearest_first_the_event_below_it() -> None:
    ranked = [memory("event", 5, 1.0), memory("far", 9, 0.9), memory("next", 6, 0.1), memory("then", 7, 0.2),
              memory("before", 4, 0.95)]
    frame = TimeFrame(WorldTime(15, 12).hours, relation="after", anchor_id="event", anchor_hours=5 * 24 + 12,
                      near_ids=("next", "then"))
    assert [r.id for r in rank_in_time(ranked, frame, weighted=False)] == ["next", "event", "then", "far", "before"]


def test_rank_in_time_the_last_time_is_the_newest_match() -> None:
    ranked = [memory("old", 2, 1.0), memory("new", 9, 0.8), memory("unrelated", 12, 0.2)]
    frame = TimeFrame(WorldTime(15, 12).hours, ordinal="last")
    assert [r.id for r in rank_in_time(ranked, frame, weighted=False)] == ["new", "old", "unrelated"]
    frame = replace(frame, ordinal="first")
    assert [r.id for r in rank_in_time(ranked, frame, weighted=False)] == ["old", "new", "unrelated"]


def test_rank_in_time_weighted_orders_by_the_effective_score_it_shows() -> None:
    ranked = [replace(memory("elsewhere", 3, 0.9), effective_score=0.7),
              replace(memory("inside", 12, 0.1), effective_score=0.05)]
    out = rank_in_time(ranked, TimeFrame(WorldTime(15, 12).hours, DaySpan(12, 12)), weighted=True)
    assert [r.id for r in out] == ["inside", "elsewhere"]
    assert out[0].effective_score is not None and out[0].effective_score > (out[1].effective_score or 0.0)


def test_rank_in_time_a_month_is_a_loose_frame() -> None:
    """"In April": a much better match told the week after still leads a weak one inside the month; a day's span
    stays strict."""
    ranked = [memory("told-after", 33, 1.0), memory("in-april", 10, 0.2), memory("elsewhere", 60, 0.9)]
    month = TimeFrame(WorldTime(90, 12).hours, DaySpan(0, 29, slack=7))
    assert [r.id for r in rank_in_time(ranked, month, weighted=False)] == ["told-after", "in-april", "elsewhere"]
    day = TimeFrame(WorldTime(90, 12).hours, DaySpan(10, 10))
    assert [r.id for r in rank_in_time(ranked, day, weighted=False)][0] == "in-april"
