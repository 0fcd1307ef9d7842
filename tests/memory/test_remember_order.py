"""Remember order (schema migration 3): `short_term_memories.seq` numbered at remember time from a counter in D1,
kept through UPDATEs, backfilled in the old (day, hour, natural id) order for rows from before it. Both D1 engines."""

from __future__ import annotations

from typing import Any

import pytest
from memory_env import build_env

from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase
from memory_sim.memory.ledger import store
from memory_sim.memory.ledger.schema import MIGRATIONS, SCHEMA_VERSION, migrate
from memory_sim.memory.models import MemoryConfig, ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

ENGINES = {"sqlite": SqliteDatabase, "duckdb": DuckDBDatabase}


def _memory(memory_id: str, day: int = 1, hour: int = 9, importance: float = 0.9) -> ShortTermMemory:
    return ShortTermMemory("ann", f"text of {memory_id}", importance, WorldTime(day, hour), id=memory_id)


@pytest.fixture(params=sorted(ENGINES))
def system(request: pytest.FixtureRequest) -> MemorySystem:
    clock = SimClock()
    env = build_env(clock)
    env.DB = ENGINES[request.param]()
    return MemorySystem(env, clock=clock, config=MemoryConfig())


def _order(system: MemorySystem) -> list[str]:
    return [m.id for m in store.remembered_in_order(system.env.DB, "ann")]


def test_remember_order_is_the_order_of_remember_calls_not_of_ids(system: MemorySystem) -> None:
    # Within one hour, ids sort z, b, m; remember order is what recall's neighbour context needs.
    system.remember(_memory("z"))
    system.remember_many([_memory("b"), _memory("m", importance=0.1)])
    system.remember(_memory("a2", hour=8))  # an earlier hour remembered later: seq follows remembering
    assert _order(system) == ["z", "b", "m", "a2"]


def test_seq_survives_updates_and_a_repeated_remember(system: MemorySystem) -> None:
    system.remember_many([_memory("c"), _memory("a"), _memory("b")])
    db = system.env.DB
    db.batch(store.set_state(db, ["a", "c"], "unindexed") + store.set_decay(db, {"a": 0.5, "b": 0.6}, 2))
    system.remember(_memory("a"))  # already in D1: first write wins, its place too
    system.remember(_memory("d"))
    assert _order(system) == ["c", "a", "b", "d"]
    seqs = [r["seq"] for r in db.prepare("SELECT seq FROM short_term_memories ORDER BY seq").all().results]
    assert seqs == sorted(set(seqs)) and seqs[0] == 1  # unique, increasing (a skipped duplicate leaves a gap)


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_migration_3_numbers_existing_rows_in_the_old_order_and_the_counter_follows(engine: str) -> None:
    db = ENGINES[engine]()
    for number, description, statements in MIGRATIONS[:2]:  # a database made before migration 3
        db.batch([db.prepare(sql) for sql in statements])
    db.prepare(
        "CREATE TABLE schema_version (version INTEGER NOT NULL PRIMARY KEY, description TEXT NOT NULL, applied_at REAL NOT NULL)"
    ).run()
    db.prepare("INSERT INTO schema_version VALUES (1, 'a', 0), (2, 'b', 0)").run()
    old: list[tuple[Any, ...]] = [("t:D1:10", 1, 9), ("t:D1:2", 1, 9), ("t:D2:1", 2, 9), ("t:D1:1", 1, 9), ("e", 1, 8)]
    insert = db.prepare(
        "INSERT INTO short_term_memories (id, npc_id, content, importance, day, hour, type, decay_factor, decayed_day)"
        " VALUES (?, 'ann', 'x', 0.5, ?, ?, 'event', 0.05, 0)"
    )
    db.batch([insert.bind(*row) for row in old])
    assert migrate(db) == SCHEMA_VERSION >= 3
    assert [m.id for m in store.remembered_in_order(db, "ann")] == ["e", "t:D1:1", "t:D1:2", "t:D1:10", "t:D2:1"]
    system = MemorySystem(build_env(SimClock()), clock=SimClock(), config=MemoryConfig())
    system.env.DB = db
    system.remember(_memory("new", day=0))
    assert store.remembered_in_order(db, "ann")[-1].id == "new"
    assert db.prepare("SELECT seq FROM short_term_memories WHERE id = 'new'").first("seq") == 6
    assert migrate(db) == SCHEMA_VERSION  # applied once
