"""remember_many(wait=False): D1 at once, the embedding and upsert on one background thread; every other method
of the system waits for that work, so what it reads is what it would be in line. Local and Cloudflare envs."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from memory_faults import FlakyEmbedder

from memory_sim.env import Env
from memory_sim.errors import D1Error
from memory_sim.memory.ledger import store
from memory_sim.memory.models import MemoryConfig, ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

WAIT_S = 10.0  # far above any real wait here; a hang fails the test instead of the run


class GatedEmbedder(FlakyEmbedder):
    """Embeds only once `gate` is set; `entered` says an embedding has started."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.gate, self.entered = threading.Event(), threading.Event()

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        self.entered.set()
        assert self.gate.wait(WAIT_S), "the gate was never opened"
        return super().embed(texts, query=query)


class FailingBatches:
    """A D1 whose `batch` fails while `down` (every other call passes through to the real one)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.down = inner, False

    def batch(self, statements: Any) -> Any:
        if self.down:
            raise D1Error("injected: D1 is unreachable")
        return self.inner.batch(statements)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def mem(npc: str, text: str, importance: float, hour: int = 9) -> ShortTermMemory:
    return ShortTermMemory(npc, text, importance, WorldTime(1, hour))


def test_it_returns_before_the_embedding_and_a_recall_waits_for_it(env: Env, clock: SimClock) -> None:
    gated = GatedEmbedder(env.embedder)
    env.embedder = gated  # type: ignore[assignment]
    system = MemorySystem(env, clock=clock, config=MemoryConfig())
    memory = mem("margaret", "The blacksmith mended my oven door.", 0.9)
    assert system.remember_many([memory], wait=False) == {memory.id}
    assert gated.entered.wait(WAIT_S)  # the background has the work and is blocked inside the model
    [row] = store.memories_of(env.DB, "margaret")
    assert row.index_state == "pending"  # D1 first, as in line: a crash now leaves it to retry_pending
    threading.Timer(0.2, gated.gate.set).start()
    found = system.recall("margaret", "the oven door", mode="vector")  # waits for the background first
    assert [r.id for r in found] == [memory.id] and found[0].source == "vectorize"
    assert store.memories_of(env.DB, "margaret")[0].index_state == "indexed"


def test_background_work_runs_in_order_and_unimportant_memories_need_none(env: Env, clock: SimClock) -> None:
    system = MemorySystem(env, clock=clock, config=MemoryConfig())
    batches = [[mem("tom", f"At the forge, hour {h}, I shod horse number {h}.", 0.8, hour=h)] for h in range(6)]
    for batch in batches:
        system.remember_many(batch, wait=False)
    assert system.remember_many([mem("tom", "It rained.", 0.2, hour=7)], wait=False) == set()
    system.settle()
    rows = store.memories_of(env.DB, "tom")
    assert sorted(r.index_state for r in rows) == ["indexed"] * 6 + ["none"]
    assert env.VECTORIZE.describe().vector_count == 6
    assert system.stats()["pending"] == 0


def test_an_outage_in_the_background_is_queued_for_retry_like_one_in_line(env: Env, clock: SimClock) -> None:
    flaky = FlakyEmbedder(env.embedder)
    env.embedder = flaky  # type: ignore[assignment]
    system = MemorySystem(env, clock=clock, config=MemoryConfig())
    system.retry_pending()
    assert system.nothing_to_retry()  # the scheduler would skip the hourly retry now
    flaky.down = True
    memory = mem("ann", "I found a silver ring by the well.", 0.9)
    system.remember_many([memory], wait=False)
    system.settle()
    assert not system.nothing_to_retry()  # the background's failure wakes the retry job
    assert store.outbox_size(env.DB) == 1
    flaky.down = False
    clock.advance_to(WorldTime(0, 3))  # past the first backoff (an hour of world time)
    assert system.retry_pending().embedded == 1
    assert store.memories_of(env.DB, "ann")[0].index_state == "indexed"


def test_an_exception_in_the_background_is_raised_by_the_next_call_and_nothing_is_lost(clock: SimClock) -> None:
    from memory_env import build_env

    env = build_env(clock)
    gated = GatedEmbedder(env.embedder)
    env.embedder, failing = gated, FailingBatches(env.DB)  # type: ignore[assignment]
    env.DB = failing  # type: ignore[assignment]
    system = MemorySystem(env, clock=clock, config=MemoryConfig())
    memory = mem("ann", "The miller owes me three coins.", 0.9)
    system.remember_many([memory], wait=False)
    assert gated.entered.wait(WAIT_S)
    failing.down = True  # the batch that records the outcome fails
    gated.gate.set()
    with pytest.raises(D1Error, match="injected"):
        system.settle()
    failing.down = False
    system.settle()  # raised once, then gone
    assert store.memories_of(env.DB, "ann")[0].index_state == "pending"  # the vector may be in; D1 says retry
    assert not system.nothing_to_retry()
    assert system.retry_pending().embedded == 1
    assert store.memories_of(env.DB, "ann")[0].index_state == "indexed"
    assert env.VECTORIZE.describe().vector_count == 1


def test_remembering_a_stored_memory_again_keeps_the_first_and_writes_the_new(system: MemorySystem, env: Env) -> None:
    first = mem("bo", "The baker gave me a warm loaf.", 0.9)
    system.remember(first)
    again = ShortTermMemory("bo", "The baker gave me a warm loaf.", 0.3, WorldTime(1, 9), id=first.id)
    fresh = mem("bo", "The baker's cat followed me home.", 0.8, hour=10)
    assert system.remember_many([again, fresh]) == {fresh.id}  # the stored one is not re-indexed
    rows = {r.id: r for r in store.memories_of(env.DB, "bo")}
    assert rows[first.id].importance == 0.9 and rows[fresh.id].index_state == "indexed"
    seqs = [r["seq"] for r in env.DB.prepare("SELECT seq FROM short_term_memories ORDER BY seq").all().results]
    assert len(seqs) == 2 and seqs[0] < seqs[1]


def test_consolidation_behind_waits_neither_for_the_background_nor_for_its_summaries(env: Env, clock: SimClock) -> None:
    gated = GatedEmbedder(env.embedder)
    env.embedder = gated  # type: ignore[assignment]
    system = MemorySystem(env, clock=clock, config=MemoryConfig())
    texts = ["The blacksmith mended my oven door.", "I thanked the blacksmith.", "Rain on the market."]
    system.remember_many([ShortTermMemory("tom", t, 0.5, WorldTime(1, 8 + h)) for h, t in enumerate(texts)])
    gated.gate.set()
    system.write_diaries(["tom"], 1)  # its echo recall asks the model for the query
    gated.gate.clear()
    gated.entered.clear()
    clock.advance_to(WorldTime(2, 6))
    later = ShortTermMemory("tom", "A stranger asked for the mill.", 0.9, WorldTime(2, 5))
    system.remember_many([later], wait=False)
    assert gated.entered.wait(WAIT_S)  # the background is blocked inside the model
    report = system.consolidate(wait=False)  # returns all the same: it reads and writes D1 only
    [summary_id] = report.details
    found = store.memories_by_ids(env.DB, [summary_id, later.id])
    assert [found[i].index_state for i in (summary_id, later.id)] == ["pending", "pending"]
    gated.gate.set()
    system.settle()
    found = store.memories_by_ids(env.DB, [summary_id, later.id])
    assert [found[i].index_state for i in (summary_id, later.id)] == ["indexed", "indexed"]
    assert env.VECTORIZE.describe().vector_count == 2
    assert system.consolidate(wait=False).consolidated == 0  # once, as in line
