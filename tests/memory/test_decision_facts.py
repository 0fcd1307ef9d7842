"""Every fact a decision needs: a relevant low-importance warning (kept in D1 only) outranks an unrelated important
memory in `decision_context`, because D1-only memories are scored on the indexed ones' scale (recalling/recent.py),
and one rule decides what reaches the index, on `remember`, `update_importance` and consolidation's linking of a
day of one memory (memory/index_rule.py).

On main a D1-only memory's keyword share was divided by its age, then weighted by importance and age again: a
0.4 warning about the bridge on the road the NPC was taking ranked under the unrelated festival, and a day's only
memory at 0.3 reached the index because consolidation linked its day to it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_sim.env import Env
from memory_sim.memory.index_rule import reaches_index
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
TODAY = 12

# What the NPC holds important and has nothing to do with the decisions asked below (all indexed: above 0.7)
IMPORTANT = [
    ("The harvest festival on the green is this Sunday; the whole village will be there.", 0.9, 11),
    ("My daughter Rose is to be married in the spring.", 0.95, 9),
    ("The vicar's sermon on charity moved me to tears.", 0.8, 10),
    ("I won the ploughing contest against Henry.", 0.85, 8),
    ("Father's old pocket watch stopped on the day he died.", 0.9, 6),
    ("The new schoolmistress taught the children their letters.", 0.75, 11),
    ("I sold the grey mare for a good price.", 0.8, 7),
    ("My brother wrote from the city; he is well.", 0.85, 10),
]

# (situation, the warning that bears on it, its importance, its day): low importance, so kept in D1 only
WARNINGS = [
    ("Shall I take the cart to the mill this afternoon?",
     "The bridge on the mill road has a rotten plank; a loaded cart could go through.", 0.4, 11),
    ("Should I walk to the Eastbrook market tomorrow?",
     "A traveller said wolves were seen on the Eastbrook road at dusk.", 0.5, 10),
    ("Can I trust the peddler with my savings?",
     "Agnes told me the peddler short-changed her twice.", 0.45, 9),
    ("Shall I take the boat across the river today?",
     "The ferryman said the river current is dangerous after the rain.", 0.35, 12),
    ("Is it safe to let the children play by the old well?",
     "The cover of the old well is cracked and loose.", 0.3, 8),
]


def farmers_memories(system: MemorySystem) -> None:
    system.remember_many([ShortTermMemory("ned", text, importance, WorldTime(day, 10))
                          for text, importance, day in IMPORTANT])
    system.remember_many([ShortTermMemory("ned", warning, importance, WorldTime(day, 15))
                          for _, warning, importance, day in WARNINGS])


@pytest.fixture(scope="module")
def shipped_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemorySystem]:
    """Chroma, DuckDB and the bundled MiniLM, as `Env.local` ships them."""
    clock = SimClock()
    with Env.local(tmp_path_factory.mktemp("farm"), environ={}, embed_model=MINILM) as env:
        system = MemorySystem(env, clock=clock)
        farmers_memories(system)
        clock.advance_to(WorldTime(TODAY, 18))
        yield system


@pytest.mark.slow
def test_a_low_importance_warning_outranks_the_unrelated_important_memories(shipped_stack: MemorySystem) -> None:
    """On main: the bridge warning ranked 2nd under the festival and the four others out of the top 4. Now 4 of
    5 rank first; the well's cover (0.3) ranks 4th, under memories that share its words ("children", "well")
    and the festival, their neighbour that day."""
    stored = {m.content: m for m in store.all_memories(shipped_stack.env.DB)}
    ranks = {}
    for situation, warning, _, _ in WARNINGS:
        assert stored[warning].index_state == "none"  # D1 only: the index rule keeps it out
        found = shipped_stack.decision_context("ned", situation, top_k=5)
        texts = [r.text for r in found]
        assert warning in texts, (situation, texts)
        ranks[warning] = texts.index(warning)
        assert found[ranks[warning]].source == "d1"
        scores = [r.effective_score for r in found]
        assert scores == sorted(scores, reverse=True)  # the score shown is the score that ordered the list
    assert ranks[WARNINGS[0][1]] == 0  # the case: the bridge on the road to the mill, at 0.4
    assert sum(rank == 0 for rank in ranks.values()) >= 4, ranks


@pytest.mark.parametrize("mode", ["hybrid", "vector"])
def test_a_d1_only_memory_scores_what_it_would_score_indexed(system: MemorySystem, clock: SimClock, mode: str) -> None:
    """The same scale: its score with `include_recent` is the score recall gives it once it is in the index
    (a memory alone on its day, so no neighbour context differs)."""
    system.remember_many([ShortTermMemory("ned", text, importance, WorldTime(day, 10))
                          for text, importance, day in IMPORTANT])
    situation, warning, _, _ = WARNINGS[0]
    memory = ShortTermMemory("ned", warning, 0.4, WorldTime(12, 15))
    system.remember(memory)
    clock.advance_to(WorldTime(12, 18))
    recent = system.recall("ned", situation, top_k=10, mode=mode, include_recent=True)  # type: ignore[arg-type]
    [before] = [r for r in recent if r.id == memory.id]
    assert before.source == "d1" and memory.id not in [
        r.id for r in system.recall("ned", situation, top_k=10, mode=mode)]  # type: ignore[arg-type]
    system.update_importance(memory.id, 0.9)  # the index rule admits it now
    [after] = [r for r in system.recall("ned", situation, top_k=10, mode=mode) if r.id == memory.id]  # type: ignore[arg-type]
    assert after.source == "vectorize" and after.score == pytest.approx(before.score, abs=1e-6)


def test_recent_means_the_last_week(system: MemorySystem, clock: SimClock) -> None:
    system.remember_many([ShortTermMemory("ned", text, importance, WorldTime(day, 10))
                          for text, importance, day in IMPORTANT])
    flood = "The mill road is flooded past the second bridge."
    system.remember(ShortTermMemory("ned", flood, 0.6, WorldTime(3, 8)))
    clock.advance_to(WorldTime(9, 12))  # day 3 is the first of the last 7 days
    assert flood in [r.text for r in system.decision_context("ned", "Is the mill road passable?", top_k=8)]
    clock.advance_to(WorldTime(10, 12))
    assert flood not in [r.text for r in system.decision_context("ned", "Is the mill road passable?", top_k=8)]


# --- one rule for the index ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "importance", "indexed"), [
    ("observation", 0.7, False), ("observation", 0.71, True), ("observation", 0.0, False),
    ("summary", 0.2, True), ("summary", 0.9, True),
])
def test_the_rule(kind: str, importance: float, indexed: bool) -> None:
    memory = ShortTermMemory("ned", "text", importance, WorldTime(1), kind=kind)  # type: ignore[arg-type]
    assert reaches_index(memory, 0.7) is indexed


def test_remember_follows_the_rule(system: MemorySystem) -> None:
    assert system.remember(ShortTermMemory("ned", "Just above.", 0.71, WorldTime(1, 9))) is True
    assert system.remember(ShortTermMemory("ned", "At the threshold.", 0.7, WorldTime(1, 10))) is False
    states = {m.content: m.index_state for m in store.all_memories(system.env.DB)}
    assert states == {"Just above.": "indexed", "At the threshold.": "none"}


def test_a_day_of_one_low_memory_is_linked_but_not_indexed(system: MemorySystem, clock: SimClock) -> None:
    """Consolidation links a day of one memory to it (the diary points there) and indexes it only as the rule
    says; on main the link indexed it whatever its importance."""
    alone = ShortTermMemory("ned", "I mended the fence by the river.", 0.3, WorldTime(2, 9))
    high = ShortTermMemory("ned", "The barn roof fell in during the storm.", 0.9, WorldTime(3, 9))
    system.remember_many([alone, high])
    system.write_diary("ned", 2)
    system.write_diary("ned", 3)
    vectors = system.stats()["vectors"]
    clock.advance_to(WorldTime(5, 0))
    report = system.consolidate()
    assert report.linked == 2
    assert store.diary_link(system.env.DB, "ned", 2) == alone.id
    rows = store.memories_by_ids(system.env.DB, [alone.id, high.id])
    assert (rows[alone.id].index_state, rows[high.id].index_state) == ("none", "indexed")
    assert system.stats()["vectors"] == vectors


def test_raising_importance_past_the_threshold_indexes_the_memory(system: MemorySystem) -> None:
    memory = ShortTermMemory("ned", "The well water tastes of iron.", 0.5, WorldTime(1, 9))
    assert system.remember(memory) is False
    assert system.update_importance(memory.id, 0.9).index_state == "indexed"
    assert system.update_importance(memory.id, 0.6).index_state == "indexed"  # decay, not this, drops it


def test_keyword_recall_already_ranks_every_memory_and_labels_the_recent_ones(system: MemorySystem) -> None:
    situation, warning, _, _ = WARNINGS[0]
    system.remember(ShortTermMemory("ned", warning, 0.4, WorldTime(0, 15)))
    plain = system.recall("ned", situation, top_k=3, mode="keyword")
    recent = system.recall("ned", situation, top_k=3, mode="keyword", include_recent=True)
    assert [(r.id, r.score) for r in plain] == [(r.id, r.score) for r in recent]  # the same ranking
    assert [r.source for r in recent if r.text == warning] == ["d1"]
