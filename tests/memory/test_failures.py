"""The failure table, row by row, with faults injected into real bindings (tests/memory/faults.py)."""

from __future__ import annotations

import pytest
from memory_env import build_env
from memory_faults import FlakyEmbedder, FlakyIndex

from memory_sim.memory.ledger import store
from memory_sim.memory.models import MemoryConfig, ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

HOUR = 3600.0


def mem(text: str, importance: float = 0.9, day: int = 1, npc: str = "margaret") -> ShortTermMemory:
    return ShortTermMemory(npc, text, importance, WorldTime(day, 10))


@pytest.fixture
def flaky(clock: SimClock) -> tuple[MemorySystem, FlakyEmbedder, FlakyIndex]:
    env = build_env(clock)
    embedder, index = FlakyEmbedder(env.embedder), FlakyIndex(env.VECTORIZE)
    env.embedder, env.VECTORIZE = embedder, index  # type: ignore[assignment]
    return MemorySystem(env, clock=clock), embedder, index


def test_embedding_fails_memory_is_in_d1_and_retried_with_backoff(flaky, clock: SimClock) -> None:
    system, embedder, _ = flaky
    embedder.down = True
    assert system.remember(mem("The blacksmith mended my oven door.")) is False
    assert store.count_memories(system.env.DB) == 1 and store.outbox_size(system.env.DB) == 1

    clock.seconds += 0.5 * HOUR  # before the first backoff (1 h): nothing is tried
    assert system.retry_pending().failed == 0 and embedder.failures == 1
    clock.seconds += 1 * HOUR  # due, still down: attempt 2, backoff doubles to 2 h
    assert system.retry_pending().failed == 1
    [row] = system.env.DB.prepare("SELECT attempts, next_attempt_at FROM embedding_outbox").all().results
    assert row["attempts"] == 2 and row["next_attempt_at"] == pytest.approx(clock() + 2 * HOUR)

    embedder.down = False
    clock.seconds += 2 * HOUR
    assert system.retry_pending().embedded == 1
    assert store.outbox_size(system.env.DB) == 0
    assert system.env.VECTORIZE.describe().vector_count == 1
    assert system.stats()["retries"] == 1


def test_vectorize_fails_recall_falls_back_to_short_term(flaky) -> None:
    system, _, index = flaky
    system.remember(mem("The blacksmith mended my oven door."))
    system.remember(mem("Rain on the market.", importance=0.2))
    index.down = True
    found = system.recall("margaret", "who mended the oven door?")
    assert found and {r.source for r in found} == {"short_term"}
    assert found[0].text == "The blacksmith mended my oven door."
    weighted = system.weighted_recall("margaret", "who mended the oven door?", current_day=3)
    assert weighted[0].source == "short_term" and weighted[0].effective_score is not None


def test_vectorize_answers_nothing_recall_falls_back(flaky, clock: SimClock) -> None:
    system, _, index = flaky
    system.remember(mem("The blacksmith mended my oven door."))
    clock.seconds += HOUR  # past the visibility window: only the fallback can find it now
    index.empty = True
    found = system.recall("margaret", "oven door")
    assert [r.source for r in found] == ["keyword"]  # hybrid's BM25 side answered
    assert system.stats()["fallbacks"] == 1
    assert [r.source for r in system.recall("margaret", "oven door", mode="vector")] == ["short_term"]  # overlap
    assert system.stats()["fallbacks"] == 2


def test_upsert_fails_memory_queued_not_lost(flaky, clock: SimClock) -> None:
    system, _, index = flaky
    index.down = True
    assert system.remember(mem("The blacksmith mended my oven door.")) is False
    index.down = False
    clock.seconds += HOUR
    assert system.retry_pending().embedded == 1
    assert [r.source for r in system.recall("margaret", "oven door")] == ["vectorize"]


def test_embedder_fails_on_the_query_recall_still_answers(flaky) -> None:
    system, embedder, _ = flaky
    system.remember(mem("The blacksmith mended my oven door."))
    embedder.down = True
    assert [r.source for r in system.recall("margaret", "oven door")] == ["short_term"]


def test_index_cap_prunes_lowest_value_first_and_keeps_d1(clock: SimClock) -> None:
    env = build_env(clock, max_vectors=5)  # the index itself refuses a sixth vector
    config = MemoryConfig(index_cap=5, cap_headroom=0.8)
    system = MemorySystem(env, clock=clock, config=config)
    clock.advance_to(WorldTime(10, 0))
    for day, importance in [(0, 0.71), (9, 0.95), (1, 0.72), (8, 0.9), (9, 0.91)]:
        system.remember(mem(f"memory of day {day} worth {importance}", importance, day))
    assert system.remember(mem("a vivid new memory", 0.99, 10)) is True
    states = {m.content: m.index_state for m in store.all_memories(env.DB)}
    assert states["memory of day 0 worth 0.71"] == "unindexed"
    assert states["memory of day 1 worth 0.72"] == "unindexed"
    assert states["a vivid new memory"] == "indexed"
    assert env.VECTORIZE.describe().vector_count == 4 and store.count_memories(env.DB) == 6
    assert system.stats()["cap_prunes"] == 2


def test_index_full_error_prunes_harder_when_the_index_cap_is_lower(clock: SimClock) -> None:
    env = build_env(clock, max_vectors=3)
    system = MemorySystem(env, clock=clock)  # believes the cap is 20M; the index says otherwise
    for day in range(4):
        assert system.remember(mem(f"memory {day}", 0.8, day)) is True
    assert env.VECTORIZE.describe().vector_count <= 3
    assert store.outbox_size(env.DB) == 0


def test_visibility_lag_recall_still_finds_a_memory_just_remembered(clock: SimClock) -> None:
    env = build_env(clock, lag_s=60.0)  # writes become visible a minute later, as Vectorize's queue does
    clock.seconds += 120.0  # let the metadata indexes (themselves queued mutations) become visible
    system = MemorySystem(env, clock=clock)
    system.remember(mem("The blacksmith mended my oven door."))
    assert env.VECTORIZE.query(env.embedder.embed(["oven door"])[0].tolist(), filter={"npcId": "margaret"}).count == 0
    found = system.recall("margaret", "oven door")
    assert [r.text for r in found] == ["The blacksmith mended my oven door."]
    clock.seconds += 3600.0
    assert [r.source for r in system.recall("margaret", "oven door")] == ["vectorize"]  # visible now, no dup


class FilterDroppingIndex(FlakyIndex):
    """An index that silently ignores the filter (the bug class behind mem0 #6423's cross-tenant leak)."""

    def query(self, vector, top_k=5, **kwargs):  # type: ignore[no-untyped-def]
        kwargs.pop("filter", None)
        return self.inner.query(vector, top_k, **kwargs)


def test_tenant_isolation_holds_even_if_the_index_drops_the_filter(clock: SimClock) -> None:
    env = build_env(clock)
    env.VECTORIZE = FilterDroppingIndex(env.VECTORIZE)  # type: ignore[assignment]
    system = MemorySystem(env, clock=clock)
    system.remember(mem("Tom's secret: he owes the miller money.", npc="tom"))
    system.remember(mem("I baked rye today."))
    clock.seconds += HOUR
    for mode in ("vector", "hybrid"):
        found = system.recall("margaret", "Tom's secret: he owes the miller money.", top_k=5, mode=mode)  # type: ignore[arg-type]
        assert [r.npc_id for r in found] == ["margaret"]
