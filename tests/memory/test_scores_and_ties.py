"""What a recall score is, and equal scores in a fixed order: by memory id, whatever order the memories were
remembered in or the index returned them."""

from __future__ import annotations

import pytest

from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.recalling.hybrid import HybridParams
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from tests.memory.memory_env import build_env

WORDS = ["red", "old", "tall", "grey", "new", "dark", "wide", "cold", "warm", "bare", "damp", "calm"]


@pytest.fixture
def system() -> MemorySystem:
    clock = SimClock()
    clock.advance_to(WorldTime(5, 12))
    system = MemorySystem(build_env(clock), clock=clock)
    # the same length, one word of the query each: equal BM25 scores; remembered in reverse id order
    for n, word in reversed(list(enumerate(WORDS))):
        system.remember(ShortTermMemory("mira", f"The mill stood {word}.", 0.9, WorldTime(3, 9), id=f"m{n:02d}"))
    return system


def test_equal_scores_rank_by_memory_id(system: MemorySystem) -> None:
    found = system.recall("mira", "the mill", top_k=4, mode="keyword")
    assert len({r.score for r in found}) == 1  # all tied
    assert [r.id for r in found] == ["m00", "m01", "m02", "m03"]
    weighted = system.weighted_recall("mira", "the mill", top_k=4, mode="keyword")
    assert len({r.effective_score for r in weighted}) == 1
    assert [r.id for r in weighted] == ["m00", "m01", "m02", "m03"]
    more = system.recall("mira", "the mill", top_k=12, mode="keyword")
    assert [r.id for r in more] == sorted(r.id for r in more) and len(more) == 12


def test_a_hybrid_score_is_at_most_its_documented_ceiling(system: MemorySystem) -> None:
    ceiling = HybridParams().max_score
    assert ceiling == pytest.approx(1.8)  # 0.3 vector + 0.7 keyword + 0.5 and 0.3 of the neighbours'
    found = system.recall("mira", "the mill stood", top_k=12, mode="hybrid")
    assert any(r.score > 1 for r in found) and all(0 <= r.score <= ceiling for r in found)
