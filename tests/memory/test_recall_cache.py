"""Hybrid recall with the MemorySystem's per-NPC cache gives exactly what the uncached path gives, over a seeded
sequence of remembers, index changes, decay, prunes and writes by another MemorySystem on the same D1."""

from __future__ import annotations

import random

import pytest
from memory_env import build_env

from memory_sim.memory.ledger import store
from memory_sim.memory.models import MemoryConfig, ShortTermMemory, WorldTime
from memory_sim.memory.recalling import recall
from memory_sim.memory.scoring import rank_by_score
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

WORDS = ("bread oven forge horse smith church pub market quarrel storm harvest fair money owed kind tom margaret"
         " baker mill fields school green sunday sermon gossip ale fire anvil flour wheat rain").split()
NPCS = ("ann", "bob")


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))


def uncached(system: MemorySystem, npc: str, query: str, k: int) -> list:
    found = recall.gather(system.env, npc, query, k, system.clock(), system.config, "hybrid", cache=None)
    return rank_by_score(found.recollections, k)


def cached(system: MemorySystem, npc: str, query: str, k: int) -> list:
    found = recall.gather(system.env, npc, query, k, system.clock(), system.config, "hybrid",
                          cache=system._recall_cache)
    return rank_by_score(found.recollections, k)


def without_cache(system: MemorySystem) -> MemorySystem:
    reference = MemorySystem.__new__(MemorySystem)
    reference.__dict__.update(system.__dict__, _recall_cache=None)
    return reference


def step(rng: random.Random, system: MemorySystem, other: MemorySystem, clock: SimClock, n: int) -> int:
    """One random write; returns the next memory number."""
    action = rng.random()
    ids = [m.id for m in store.all_memories(system.env.DB)]
    if action < 0.45 or not ids:
        day = int(clock() // 86400)
        batch = [ShortTermMemory(rng.choice(NPCS), text(rng), rng.random(), WorldTime(day=day, hour=rng.randint(0, 23)),
                                 id=f"m{n + i}") for i in range(rng.randint(1, 6))]
        rng.choice((system, other)).remember_many(batch, index_all=rng.random() < 0.2)
        return n + len(batch)
    if action < 0.6:
        chosen = rng.sample(ids, min(len(ids), rng.randint(1, 4)))
        other.unindex(chosen, counter="cap_prunes")  # another process forgets some
    elif action < 0.7:
        chosen = [m for m in store.all_memories(system.env.DB) if m.index_state in ("none", "unindexed")]
        if chosen:
            system.index_memory(_short(rng.choice(chosen)))
    elif action < 0.8:
        chosen = rng.sample(ids, min(len(ids), 3))
        state = rng.choice(("pending", "none", "indexed", "unindexed"))
        system.env.DB.batch(store.set_state(system.env.DB, chosen, state, clock()))  # as check.py or a job would
    elif action < 0.9:
        clock.seconds += 86400 * rng.randint(1, 5)
        rng.choice((system, other)).decay_and_prune()
    else:
        clock.seconds += 3600
    return n


def _short(m) -> ShortTermMemory:
    return ShortTermMemory(m.npc_id, m.content, m.importance, WorldTime(day=m.day, hour=m.hour), type=m.type, id=m.id)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cached_hybrid_recall_equals_uncached(seed: int) -> None:
    rng = random.Random(seed)
    clock = SimClock()
    clock.seconds += 86400
    env = build_env(clock)
    config = MemoryConfig(index_threshold=0.4)
    system = MemorySystem(env, clock=clock, config=config)
    other = MemorySystem(env, clock=clock, config=config)  # a second writer: its writes must invalidate ours
    for npc in NPCS:  # registered: recalled before their first memory, they answer [] (an unknown NPC is refused)
        system.register_npc(npc, npc.title())
    n, compared = 0, 0
    for _ in range(120):
        n = step(rng, system, other, clock, n)
        npc, query, k = rng.choice(NPCS), text(rng), rng.choice((1, 5, 20))
        # the candidates, then recall's whole answer (repeats collapsed, corrections above what they correct)
        assert cached(system, npc, query, k) == uncached(system, npc, query, k)
        assert system.recall(npc, query, top_k=k) == without_cache(system).recall(npc, query, top_k=k)
        compared += 1
        weighted = system.weighted_recall(npc, query, top_k=5)
        reference = MemorySystem.__new__(MemorySystem)
        reference.__dict__.update(system.__dict__, _recall_cache=None)
        assert weighted == reference.weighted_recall(npc, query, top_k=5)
    assert compared == 120 and n > 50


def test_revision_moves_only_when_the_semantic_set_or_decay_changes() -> None:
    clock = SimClock()
    env = build_env(clock)
    system = MemorySystem(env, clock=clock)
    db = env.DB
    system.remember_many([ShortTermMemory("ann", "the forge is hot", 0.9, WorldTime(day=1, hour=1), id="a"),
                          ShortTermMemory("ann", "bread at the mill", 0.1, WorldTime(day=1, hour=2), id="b")])
    rev, counter = store.revisions(db)  # type: ignore[misc]
    db.batch(store.set_state(db, ["a"], "pending"))  # indexed -> pending: same set
    assert store.revisions(db) == (rev, counter)
    db.batch(store.set_state(db, ["b"], "pending"))  # none -> pending: enters
    assert store.revisions(db) == (rev + 1, counter)
    db.batch(store.set_state(db, ["a"], "unindexed"))  # leaves
    assert store.revisions(db) == (rev + 2, counter)
    db.batch(store.set_decay(db, {"a": 0.5}, 2))
    assert store.revisions(db) == (rev + 3, counter)
    system.remember(ShortTermMemory("ann", "rain on the fields", 0.9, WorldTime(day=2, hour=1), id="c"))
    assert store.revisions(db) == (rev + 3, counter + 1)  # a remember moves the counter only


def test_cache_reuses_the_view_and_appends_new_memories() -> None:
    clock = SimClock()
    env = build_env(clock)
    system = MemorySystem(env, clock=clock)
    system.remember(ShortTermMemory("ann", "the forge is hot", 0.9, WorldTime(day=1, hour=1), id="a"))
    system.recall("ann", "forge")
    view = system._recall_cache.view("ann")
    assert view is not None and [m.id for m in view.rows] == ["a"]
    system.remember(ShortTermMemory("ann", "the forge again", 0.9, WorldTime(day=1, hour=2), id="b"))
    again = system._recall_cache.view("ann")
    assert again is view and [m.id for m in view.rows] == ["a", "b"]  # appended, not rebuilt
    assert [r.id for r in system.recall("ann", "forge", top_k=2)] == [r.id for r in uncached(system, "ann", "forge", 2)]


def test_a_forgotten_memory_leaves_the_kept_index_and_the_others_keep_their_slots() -> None:
    clock = SimClock()
    env = build_env(clock)
    system = MemorySystem(env, clock=clock)
    other = MemorySystem(env, clock=clock)  # another process forgets: only D1's revision tells us
    system.remember_many([ShortTermMemory("ann", text, 0.9, WorldTime(day=1, hour=h), id=i) for h, (i, text) in
                          enumerate([("a", "the forge is hot"), ("b", "forge and anvil"), ("c", "bread at the mill")])])
    system.recall("ann", "forge")
    view = system._recall_cache.view("ann")
    assert view is not None and view.index.ids == ["a", "b", "c"]
    other.unindex(["b"], counter="cap_prunes")
    assert system._recall_cache.view("ann") is view  # updated in place, not rebuilt
    assert view.index.ids == ["a", None, "c"] and [m.id for m in view.rows] == ["a", "c"]
    found = system.recall("ann", "forge anvil", top_k=3)
    assert "b" not in {r.id for r in found}
    assert found == uncached(system, "ann", "forge anvil", 3)


def test_profiles_are_read_again_when_another_process_registers_or_forgets_an_npc() -> None:
    clock = SimClock()
    env = build_env(clock)
    system = MemorySystem(env, clock=clock)
    other = MemorySystem(env, clock=clock)  # registers on the same D1: only D1's NPC revision tells us
    system.remember_many([ShortTermMemory("ann", text, 0.9, WorldTime(day=1, hour=h), id=i) for h, (i, text) in
                          enumerate([("a", "the blacksmith mended a horseshoe"), ("b", "the baker sold bread")])])
    query = "what did Tom make?"
    assert system.recall("ann", query, top_k=2) == uncached(system, "ann", query, 2)  # profiles cached: none
    other.register_npc("tom", "Tom", role="the blacksmith")
    found = system.recall("ann", query, top_k=2)
    assert found == uncached(system, "ann", query, 2) and found[0].id == "a"  # "Tom: the blacksmith" expands
    other.update_npc("tom", role="the baker")
    found = system.recall("ann", query, top_k=2)
    assert found == uncached(system, "ann", query, 2) and found[0].id == "b"
    other.forget_npc("tom")
    assert system.recall("ann", query, top_k=2) == uncached(system, "ann", query, 2)  # no expansion again


def test_a_warm_hybrid_recall_reads_d1_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The proof of the NPC's view and of the registered NPCs is one statement (each costs ~0.5 ms on DuckDB)."""
    clock = SimClock()
    env = build_env(clock)
    system = MemorySystem(env, clock=clock)
    system.register_npc("tom", "Tom", role="the blacksmith")
    system.remember(ShortTermMemory("ann", "the forge is hot", 0.9, WorldTime(day=1, hour=1), id="a"))
    system.recall("ann", "Tom at the forge")
    statements: list[str] = []
    prepare = env.DB.prepare
    monkeypatch.setattr(env.DB, "prepare", lambda sql: statements.append(sql) or prepare(sql))
    assert [r.id for r in system.recall("ann", "Tom at the forge")] == ["a"]
    assert len(statements) == 1 and "sequences" in statements[0]
