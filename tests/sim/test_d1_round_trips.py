"""D1 round trips of the memory loop: the same rows and answers as before D1 writes were batched, in fewer
statements (`CountingD1` counts what passes through the binding)."""

from __future__ import annotations

import json
from pathlib import Path

from memory_faults import FlakyEmbedder
from village_digest import digest, run

from memory_sim.bench.d1_count import CountingD1
from memory_sim.env import Env
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.scheduling import SimScheduler
from memory_sim.sim.clock import SimClock

HOUR = 3600.0


def counted_env(clock: SimClock) -> Env:
    env = Env.in_memory(clock=clock)
    env.DB = CountingD1(env.DB)
    return env


def test_a_seeded_village_leaves_the_rows_and_answers_it_left_before_batching() -> None:
    expected = json.loads((Path(__file__).parent / "data" / "village_6x5.json").read_text("utf-8"))
    with Env.in_memory(clock=SimClock()) as env:
        assert digest(env, run(env)) == expected


def test_the_demo_village_costs_at_most_one_statement_a_memory() -> None:
    clock = SimClock()
    with counted_env(clock) as env:
        system = run(env, npcs=8, days=14)  # the demo's village: before batching, 5.8 statements a memory
        memories = store.count_memories(env.DB)
        db = env.DB
        assert isinstance(db, CountingD1)
        # 1.45 and 0.96 before the memory system's statements became set-based; 0.85 and 0.66 after
        assert db.statements / memories <= 1.0, (db.statements, memories)
        assert db.round_trips / memories <= 0.75, (db.round_trips, memories)
        assert system.stats()["pending"] == 0


def test_remember_many_is_one_batch_and_one_batch_of_outcomes() -> None:
    clock = SimClock()
    with counted_env(clock) as env:
        system = MemorySystem(env, clock=clock)
        db = env.DB
        assert isinstance(db, CountingD1)
        memories = [ShortTermMemory("tom", f"I shod the miller's horse, shoe {i}.", 0.9, WorldTime(1, 9)) for i in range(3)]
        system.remember(ShortTermMemory("tom", "Dawn.", 0.2, WorldTime(1, 8)))  # key inference reads the registry once
        before, statements = db.round_trips, db.statements
        assert system.remember_many(memories) == {m.id for m in memories}
        assert db.round_trips - before == 2  # the rows, pending; then indexed
        assert db.statements - statements == 2  # the rows (their seq from the counter they move); then their state
        quiet = [ShortTermMemory("tom", "Rain again.", 0.2, WorldTime(1, 10))]
        before = db.round_trips
        assert system.remember_many(quiet) == set()
        assert db.round_trips - before == 1  # D1 only
        assert store.outbox_size(db) == 0 and system.stats()["indexed"] == 3


def test_an_idle_hour_costs_no_statement_but_a_postponed_memory_is_retried() -> None:
    clock = SimClock()
    with counted_env(clock) as env:
        flaky = FlakyEmbedder(env.embedder)
        env.embedder = flaky
        system = MemorySystem(env, clock=clock)
        scheduler = SimScheduler(system)
        db = env.DB
        assert isinstance(db, CountingD1)
        scheduler.tick(clock())  # the first tick reads what an earlier process may have left
        for hour in (1, 2):
            clock.seconds = hour * HOUR
            before = db.statements
            assert scheduler.tick(clock()) == []
            assert db.statements == before  # nothing due, nothing read
        flaky.down = True
        memory = ShortTermMemory("tom", "The forge fire went out in the night.", 0.9, WorldTime(0, 3))
        assert system.remember(memory) is False
        assert store.outbox_size(db) == 1
        flaky.down = False
        for hour in range(3, 12):  # the retry waits for its backoff, then indexes it
            clock.seconds = hour * HOUR
            scheduler.tick(clock())
        assert store.outbox_size(db) == 0
        assert system.memory(memory.id).index_state == "indexed"
        assert system.stats()["retries"] == 1


def test_a_decay_pass_leaves_memories_at_the_cap_alone() -> None:
    clock = SimClock()
    with counted_env(clock) as env:
        system = MemorySystem(env, clock=clock)
        system.remember(ShortTermMemory("tom", "Rain on the forge roof.", 0.2, WorldTime(0, 9)))  # D1 only
        clock.seconds = 60 * 86400.0  # 0.05 + 60 days x 0.034 a day: past the cap
        assert system.decay_and_prune().decayed == 1
        assert system.memory(system.memories("tom").memories[0].id).decay_factor == 1.0
        clock.seconds = 61 * 86400.0
        assert system.decay_and_prune().decayed == 0  # nothing left to grow: not read, not written
        assert system.memories("tom").memories[0].decayed_day == 60
