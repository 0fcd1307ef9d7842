"""Hybrid recall reads cues from the question (memory/recalling/cues.py): whose words, and the switch that turns
them off."""

from __future__ import annotations

import math

from memory_sim.memory.config import MemoryConfig
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.recalling.recall_cache import NpcView
from memory_sim.memory.system import MemorySystem

QUESTION = "What did Bob do at the pottery class?"


def remember_two_turns(system: MemorySystem) -> None:
    """Both turns match the question's words; Ann's matches more of them (Bob, pottery and class twice)."""
    texts = ["Ann: Bob and I went to the pottery class, a fine pottery class.", "Bob: I went to pottery too."]
    system.remember_many([ShortTermMemory("ann", t, 0.5, WorldTime(0, 9 + i), id=f"t{i}") for i, t in
                          enumerate(texts)], index_all=True)
    system.clock.advance_to(WorldTime(2))  # type: ignore[attr-defined]


def test_recall_lifts_the_named_speakers_turn(system: MemorySystem) -> None:
    remember_two_turns(system)
    assert [r.id for r in system.recall("ann", QUESTION, mode="hybrid")][0] == "t1"
    assert NpcView.read(system.env.DB, "ann").subjects() == frozenset({"ann", "bob"})


def test_without_cues_the_words_decide(system: MemorySystem) -> None:
    system.config = MemoryConfig(query_cues=False)
    remember_two_turns(system)
    assert [r.id for r in system.recall("ann", QUESTION, mode="hybrid")][0] == "t0"


def test_explain_takes_the_cues_apart_and_its_parts_add_up_to_recalls_score(system: MemorySystem) -> None:
    from memory_sim.memory.recalling.explain import explain

    remember_two_turns(system)
    found = explain(system, "ann", QUESTION, mode="hybrid")
    bob = next(e for e in found if e.recollection.id == "t1")
    assert bob.hybrid is not None and bob.hybrid.cue_factor == 2.0  # the question is about Bob: his turn, x2
    for e in found:
        assert e.hybrid is not None and math.isclose(e.hybrid.total, e.recollection.score, rel_tol=1e-9)
