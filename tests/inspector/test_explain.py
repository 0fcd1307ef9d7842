"""The pure parts of explaining recall: a hybrid score's terms add up to hybrid_scores' score."""

from __future__ import annotations

import math
import random

from memory_sim.memory.models import StoredMemory
from memory_sim.memory.recalling.explain import timeline_of
from memory_sim.memory.recalling.hybrid import HybridParams, Timeline, hybrid_parts, hybrid_scores


def test_hybrid_parts_add_up_to_the_hybrid_score_for_random_inputs() -> None:
    rng = random.Random(5)
    for _ in range(200):
        ids = [f"m{i}" for i in range(rng.randint(1, 30))]
        episodes, start = [], 0
        while start < len(ids):
            size = rng.randint(1, 6)
            episodes.append(ids[start : start + size])
            start += size
        vector = {i: rng.uniform(-0.2, 1.0) for i in rng.sample(ids, rng.randint(0, len(ids)))}
        keyword = {i: rng.uniform(0.0, 12.0) for i in rng.sample(ids, rng.randint(0, len(ids)))}
        timeline = Timeline.of(episodes)
        want = hybrid_scores(vector, keyword, timeline, HybridParams())
        got = hybrid_parts(vector, keyword, timeline, HybridParams())
        assert got.keys() == want.keys()
        for doc_id, parts in got.items():
            assert math.isclose(parts.total, want[doc_id], rel_tol=1e-12, abs_tol=1e-12)
            assert parts.context >= 0.0 and parts.vector == vector.get(doc_id) and parts.keyword == keyword.get(doc_id)


def test_the_timeline_of_rows_is_days_in_order_of_their_first_memory() -> None:
    def row(memory_id: str, day: int) -> StoredMemory:
        return StoredMemory(memory_id, "npc", "text", 0.5, day, 0, "event", "observation", 0.05, "indexed")

    timeline, positions = timeline_of([row("a", 2), row("b", 1), row("c", 2), row("d", 1)])
    assert timeline.episodes == (("a", "c"), ("b", "d"))
    assert positions == {"a": (0, 0), "b": (1, 0), "c": (0, 1), "d": (1, 1)}
