"""A consolidated summary joins recall without changing how the original memories rank: BM25's corpus statistics
leave summaries out (they repeat their sources' words), a summary's keyword score is its best sentence's, and its
vector score is capped at its best sentence's (one vector for several sentences matches queries none of them
answers)."""

from __future__ import annotations

import numpy as np
import pytest

from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.recalling.keyword import BM25Index, sentence_tokens
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from tests.memory.memory_env import build_env

DAY = (  # filed about Agnes, so consolidation takes them as one topic, however little else they share
    ("A fire broke out near the forge; everyone ran with buckets.", 0.8, "event"),
    ("Agnes struts about the square as if she owned the place.", 0.8, "opinion"),
)
OTHERS = (
    ("The forge bellows wheezed all morning.", 0.8, 3),
    ("Agnes bought bread and said nothing.", 0.8, 4),
    ("Rose sang at the chapel on Sunday.", 0.8, 5),
)


def test_a_document_outside_the_statistics_leaves_other_scores_alone() -> None:
    docs = [("a", "the forge was hot"), ("b", "Agnes at the forge"), ("c", "bread and butter")]
    plain = BM25Index()
    plain.extend(docs)
    with_summary = BM25Index()
    with_summary.extend(docs)
    with_summary.add("s", "the forge was hot. Agnes at the forge", counted=False)
    scores = with_summary.scores("Agnes forge")
    assert {k: v for k, v in scores.items() if k != "s"} == plain.scores("Agnes forge")
    assert scores["s"] > 0


def village(clock: SimClock) -> MemorySystem:
    system = MemorySystem(build_env(clock), clock=clock)
    for hour, (text, importance, kind) in enumerate(DAY, start=9):
        system.remember(ShortTermMemory("henry", text, importance, WorldTime(2, hour), type=kind,  # type: ignore[arg-type]
                                        about=("agnes",)))
    for text, importance, day in OTHERS:
        system.remember(ShortTermMemory("henry", text, importance, WorldTime(day, 10)))
    system.write_diary("henry", day=2)
    return system


def test_consolidation_does_not_change_how_observations_rank_by_keyword() -> None:
    clock = SimClock(WorldTime(3))
    system = village(clock)
    query = "What does Henry think of Agnes and the forge?"
    before = {r.id: r.score for r in system.recall("henry", query, top_k=10, mode="keyword")}
    clock.advance_to(WorldTime(8))
    assert system.consolidate().consolidated == 1
    after = system.recall("henry", query, top_k=10, mode="keyword")
    observations = {r.id: r.score for r in after if r.kind == "observation"}
    # the summary scores as its best sentence, ties with that memory, and the memory is kept (scoring.distinct)
    assert len(observations) >= 2 and not any(r.kind == "summary" for r in after)
    first = next(iter(observations))  # scores are divided by the best one: compare them relative to one memory
    for memory_id, score in observations.items():
        assert score / observations[first] == pytest.approx(before[memory_id] / before[first], rel=1e-9), memory_id


def test_a_summary_is_no_more_relevant_than_its_best_sentence() -> None:
    clock = SimClock(WorldTime(3))
    system = village(clock)
    clock.advance_to(WorldTime(8))
    system.consolidate()
    query = "fire forge buckets Agnes struts square"
    query_vector = system.env.embedder.embed([query], query=True)[0]
    best_sentence = float(np.max(system.env.embedder.embed([t for t, _, _ in DAY]) @ query_vector))
    found = system.recall("henry", query, top_k=5, mode="vector")
    summary = next(r for r in found if r.kind == "summary")
    assert summary.score <= best_sentence + 1e-6


def test_weighted_recall_ranks_a_summary_no_higher_than_its_best_source() -> None:
    """A day's summary averages its sources' importance: the storm's 1.0 lifts the oven door's 0.5 to 0.75, and
    uncapped the summary would outrank another day's better answer (importance 0.55) that led before."""
    clock = SimClock(WorldTime(2))
    system = MemorySystem(build_env(clock), clock=clock)
    # events, not opinions: two opinions about Tom would be one state key's versions, the storm current
    oven, storm = (ShortTermMemory("henry", text, importance, WorldTime(2, hour), type="event", about=("tom",))
                   for text, importance, hour in (("Tom mended the oven door.", 0.5, 9),
                                                  ("The storm flattened the barley field.", 1.0, 10)))  # one topic
    system.remember_many([oven, storm])
    better = ShortTermMemory("henry", "Tom mended my oven door for free.", 0.55, WorldTime(3, 9))
    system.remember(better)
    for day in (2, 3):
        system.write_diary("henry", day=day)
    clock.advance_to(WorldTime(5))
    query = "Who mended the oven door?"
    before = system.weighted_recall("henry", query, top_k=1, mode="keyword")
    assert system.consolidate().consolidated == 1
    (summary,) = system.lineage(oven.id).summaries
    assert summary.importance == pytest.approx(0.75) and system.lineage(storm.id).summaries == (summary,)
    after = system.weighted_recall("henry", query, top_k=2, mode="keyword")
    assert [r.id for r in before] == [after[0].id] == [better.id]  # the summary stands for the oven door, second
    assert after[1].id in (oven.id, summary.id) and after[1].effective_score <= after[0].effective_score


def test_a_summary_scores_as_its_best_sentence_by_keyword() -> None:
    """A topic summary names its topic in every sentence: scored whole, "Agnes" twice outranked each memory."""
    index = BM25Index()
    index.extend([("a", "Agnes sold me bread."), ("b", "Agnes waved at the forge."), ("c", "Rain all day.")])
    index.add_parts("s", sentence_tokens("Agnes sold me bread. Agnes waved at the forge."))
    scores = index.scores("Agnes")
    assert scores["s"] == pytest.approx(max(scores["a"], scores["b"]), rel=1e-6)  # tantivy keeps float32
    whole = BM25Index()
    whole.extend([("a", "Agnes sold me bread."), ("b", "Agnes waved at the forge."), ("c", "Rain all day.")])
    whole.add("s", "Agnes sold me bread. Agnes waved at the forge.", counted=False)
    assert whole.scores("Agnes")["s"] > scores["s"]  # scored whole, it would outrank both memories
