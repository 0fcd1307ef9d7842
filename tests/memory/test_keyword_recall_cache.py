"""Keyword recall with the MemorySystem's per-NPC cache gives exactly what a BM25 index built from D1 for each call
gives (scores and tie order included), over seeded sequences of remembers, forgets, importance updates, decay,
consolidation and writes by another MemorySystem on the same D1; sqlite3 and DuckDB D1."""

from __future__ import annotations

import random

import pytest
from memory_env import build_env

from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase
from memory_sim.memory.ledger import store
from memory_sim.memory.models import MemoryConfig, Recollection, ShortTermMemory, WorldTime
from memory_sim.memory.recalling import recall
from memory_sim.memory.recalling.keyword import BM25Index
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

ENGINES = {"sqlite": SqliteDatabase, "duckdb": DuckDBDatabase}
WORDS = "bread oven forge horse smith church pub market quarrel storm harvest fair ale fire anvil flour rain".split()
NPCS = ("ann", "bob")


def per_call(system: MemorySystem, npc: str, query: str, k: int) -> list[Recollection]:
    """Keyword candidates as they were made before the cache: an index over `store.memories_of`, built here."""
    rows = store.memories_of(system.env.DB, npc)
    index = BM25Index()
    for m in rows:
        index.add(m.id, m.content, counted=m.kind != "summary")
    found = index.search(query, k)
    best = found[0][1] if found else 1.0
    by_id = {m.id: m for m in rows}
    return [recall.to_recollection(by_id[i], score / best, "keyword") for i, score in found]


def cached(system: MemorySystem, npc: str, query: str, k: int) -> list[Recollection]:
    config = system.config
    found = recall.gather(system.env, npc, query, k, system.clock(), config, "keyword", system._recall_cache)
    return found.recollections


def make(engine: str) -> tuple[MemorySystem, MemorySystem, SimClock]:
    clock = SimClock()
    clock.seconds += 3 * 86400
    env = build_env(clock)
    env.DB = ENGINES[engine]()
    config = MemoryConfig(index_threshold=0.5)
    # a second writer on the same D1: only D1's counters tell the first one what it did
    system = MemorySystem(env, clock=clock, config=config)
    for npc in NPCS:  # registered: recalled before their first memory, they answer [] (an unknown NPC is refused)
        system.register_npc(npc, npc.title())
    return system, MemorySystem(env, clock=clock, config=config), clock


def text(rng: random.Random) -> str:
    """Few words, often the same ones: many memories score alike, so tie order is tested."""
    return " ".join(rng.choice(WORDS[:8]) for _ in range(rng.randint(1, 4)))


def memories(rng: random.Random, clock: SimClock, n: int) -> list[ShortTermMemory]:
    """Ids, days and hours that sort otherwise than remember order."""
    today = int(clock() // 86400)
    return [ShortTermMemory(rng.choice(NPCS), text(rng), rng.random(),
                            WorldTime(day=rng.randint(max(0, today - 3), today), hour=rng.choice((3, 9))),
                            id=f"{rng.choice('zqa')}{n + i}") for i in range(rng.randint(1, 5))]


def step(rng: random.Random, system: MemorySystem, other: MemorySystem, clock: SimClock, n: int) -> int:
    """One random write, by either system; returns the next memory number."""
    writer = rng.choice((system, other))
    visible = [m.id for m in store.all_memories(system.env.DB)]
    action = rng.random()
    if action < 0.25 or not visible:
        writer.remember(memories(rng, clock, n)[0])
        return n + 1
    if action < 0.5:
        batch = memories(rng, clock, n)
        writer.remember_many(batch, index_all=rng.random() < 0.3)
        return n + len(batch)
    if action < 0.6:
        writer.forget(rng.sample(visible, min(len(visible), rng.randint(1, 3))), "test")
    elif action < 0.72:
        writer.update_importance(rng.choice(visible), rng.random())
    elif action < 0.8:
        writer.unindex(rng.sample(visible, min(len(visible), 2)), counter="cap_prunes")
    elif action < 0.9:
        clock.seconds += 86400 * rng.randint(1, 3)
        writer.decay_and_prune()
    else:
        day = int(clock() // 86400)
        writer.write_diaries(list(NPCS), day)
        clock.seconds += 86400
        writer.consolidate()
    return n


@pytest.mark.parametrize(("engine", "seed"), [("sqlite", 4), ("sqlite", 2), ("duckdb", 3)])
def test_cached_keyword_recall_equals_a_per_call_build(engine: str, seed: int) -> None:
    rng = random.Random(seed)
    system, other, clock = make(engine)
    n, ties = 0, 0
    for _ in range(80):
        n = step(rng, system, other, clock, n)
        for _ in range(2):
            npc, query, k = rng.choice(NPCS), text(rng), rng.choice((1, 3, 5, 40))
            expected = per_call(system, npc, query, k)
            assert cached(system, npc, query, k) == expected
            ties += len({r.score for r in expected}) < len(expected)
        uncached = MemorySystem.__new__(MemorySystem)  # the same system without its cache
        uncached.__dict__.update(system.__dict__, _recall_cache=None)
        assert system.recall(npc, query, mode="keyword") == uncached.recall(npc, query, mode="keyword")
    assert n > 60 and ties > 20  # the sequence remembered enough, and scores tied often
    summaries = [m for m in store.all_memories(system.env.DB) if m.kind == "summary"]
    forgotten = store.memories_in_state(system.env.DB, store.FORGOTTEN_STATES)
    assert summaries and forgotten  # consolidation and forgetting took part


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_a_warm_keyword_recall_reads_d1_once_and_builds_no_index(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    system, _, _ = make(engine)
    system.remember_many([ShortTermMemory("ann", t, 0.9, WorldTime(day=1, hour=h), id=f"m{h}")
                          for h, t in enumerate(["the forge is hot", "forge and anvil", "bread at the mill"])])
    system.recall("ann", "forge", mode="keyword")
    view = system._recall_cache.view("ann", kind="keyword")
    assert view is not None and view.index.writes == 1
    statements: list[str] = []
    prepare = system.env.DB.prepare
    monkeypatch.setattr(system.env.DB, "prepare", lambda sql: statements.append(sql) or prepare(sql))
    assert [r.id for r in system.recall("ann", "forge", mode="keyword")] == ["m0", "m1"]
    assert len(statements) == 1 and "sequences" in statements[0]  # the proof; no rows read, no index built
    monkeypatch.undo()
    assert system._recall_cache.view("ann", kind="keyword") is view and view.index.writes == 1
    system.remember(ShortTermMemory("ann", "a forge by the mill", 0.1, WorldTime(day=2, hour=1), id="m9"))
    assert [r.id for r in system.recall("ann", "forge mill", top_k=1, mode="keyword")] == ["m9"]
    assert system._recall_cache.view("ann", kind="keyword") is view and view.index.writes == 2  # one commit


def test_the_keyword_view_keeps_every_visible_memory_and_drops_forgotten_ones() -> None:
    system, other, _ = make("sqlite")
    system.remember_many([ShortTermMemory("ann", "the forge is hot", 0.9, WorldTime(day=1, hour=1), id="a"),
                          ShortTermMemory("ann", "forge and anvil", 0.1, WorldTime(day=1, hour=2), id="b")])
    assert [r.id for r in system.recall("ann", "forge", mode="keyword")] == ["a", "b"]  # b: never indexed
    view = system._recall_cache.view("ann", kind="keyword")
    assert view is not None and {m.index_state for m in view.rows} == {"indexed", "none"}
    other.forget(["a"], "another process")
    assert [r.id for r in system.recall("ann", "forge", mode="keyword")] == ["b"]
    assert system._recall_cache.view("ann", kind="keyword") is view and view.index.ids == [None, "b"]


def test_revision_moves_when_a_memory_enters_or_leaves_what_keyword_recall_sees() -> None:
    system, _, _ = make("sqlite")
    db = system.env.DB
    system.remember_many([ShortTermMemory("ann", "the forge is hot", 0.1, WorldTime(day=1, hour=1), id="a"),
                          ShortTermMemory("ann", "bread at the mill", 0.1, WorldTime(day=1, hour=2), id="b")])
    rev, counter = store.revisions(db)  # type: ignore[misc]
    db.batch(store.set_state(db, ["a"], "unindexed"))  # none -> unindexed: seen by keyword recall alike
    assert store.revisions(db) == (rev, counter)
    db.batch(store.set_state(db, ["a"], "forgetting"))  # leaves keyword recall's set
    assert store.revisions(db) == (rev + 1, counter)
    db.batch(store.set_state(db, ["a"], "forgotten"))  # still out
    assert store.revisions(db) == (rev + 1, counter)
    db.batch(store.set_state(db, ["a"], "none"))  # back in
    assert store.revisions(db) == (rev + 2, counter)


def test_search_by_an_order_answers_alike_whatever_order_the_index_was_filled_in() -> None:
    docs = [(f"d{i}", "forge and anvil" if i % 3 else "forge") for i in range(12)]  # two scores, many ties
    forward, backward = BM25Index(), BM25Index()
    forward.extend(docs)
    backward.extend(reversed(docs))
    for k in (1, 4, 5, 12, 20):
        expected = forward.search("forge anvil", k)
        assert [i for i, _ in expected] == [f"d{i}" for i in (1, 2, 4, 5, 7, 8, 10, 11, 0, 3, 6, 9)][:k]
        assert backward.search("forge anvil", k, order=lambda i: int(i[1:])) == expected
        assert backward.search("forge anvil", k) != expected  # insertion order breaks the ties otherwise
