"""The memory system asks D1 for little: a remember batch is its INSERTs alone (each `seq` from the highest
one, no counter statement), the background's index outcomes wait for one statement, a scheduler's tick records
its jobs in one statement, an idle consolidation reads nothing, and a decay pass counts the index only when it
may be over its cap. Run on both local D1 engines: the SQL must mean the same on DuckDB as on sqlite (D1's own
engine)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_sim.bench.d1_count import CountingD1
from memory_sim.builder import local_d1_account
from memory_sim.env import Env
from memory_sim.memory.config import MemoryConfig
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.scheduling import SimScheduler
from memory_sim.sim.clock import SimClock

HOUR = 3600.0


class Logged(CountingD1):
    """CountingD1 that also writes down the SQL of every statement that reaches the database."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.sql: list[str] = []

    def prepare(self, sql: str) -> Any:
        return _Logged(self, super().prepare(sql), sql)

    def batch(self, statements: Any) -> Any:
        self.sql += [s.text for s in statements]
        return super().batch([s.counted for s in statements])


class _Logged:
    def __init__(self, owner: Logged, counted: Any, text: str) -> None:
        self.owner, self.counted, self.text = owner, counted, text

    def bind(self, *values: Any) -> _Logged:
        return _Logged(self.owner, self.counted.bind(*values), self.text)

    def __getattr__(self, name: str) -> Any:  # first, all, run, raw: one statement on its own
        self.owner.sql.append(self.text)
        return getattr(self.counted, name)


@pytest.fixture(params=["sqlite", "duckdb"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def logged_env(clock: SimClock, engine: str, folder: Path) -> Env:
    db = local_d1_account(folder, engine).create("memory")
    return Env.in_memory(clock, db=Logged(db))


def logged(env: Env) -> Logged:
    assert isinstance(env.DB, Logged)
    return env.DB


def mem(text: str, importance: float, day: int, npc: str = "ada", hour: int = 10) -> ShortTermMemory:
    return ShortTermMemory(npc, text, importance, WorldTime(day, hour))


def test_a_remember_batch_numbers_its_rows_from_the_highest_seq_with_no_counter_statement(
    engine: str, tmp_path: Path
) -> None:
    clock = SimClock()
    with logged_env(clock, engine, tmp_path) as env:
        system = MemorySystem(env, clock=clock)
        system.remember(mem("Dawn over the mill.", 0.2, 0, hour=1))
        db = logged(env)
        many = [mem(f"Chore {k}: the {k}th sack of flour, {0.1 + k / 7:.17f} full.", 0.1 + (k % 5) / 10, 1)
                for k in range(200)]
        before = len(db.sql)
        system.remember_many(many)
        written = db.sql[before:]
        assert sum(s.startswith("INSERT INTO short_term_memories") for s in written) == 34  # 6 rows a statement
        assert not any("sequences" in s and not s.startswith("INSERT INTO short_term") for s in written)
        rows = {m.id: (m, seq) for m, seq in store.select_page(db, "npc_id = ?", ["ada"], 2000, forgotten=False)}
        assert [rows[m.id][1] for m in many] == list(range(2, 202))  # remember order, after the first memory
        assert all(rows[m.id][0].content == m.content and rows[m.id][0].importance == m.importance for m in many)
        assert store.revisions(db) is not None and store.revisions(db)[1] == 201  # type: ignore[index]


def test_a_memory_remembered_twice_is_kept_once_and_no_number_is_given_twice(engine: str, tmp_path: Path) -> None:
    clock = SimClock()
    with logged_env(clock, engine, tmp_path) as env:
        system = MemorySystem(env, clock=clock)
        db = logged(env)
        first = mem("The well ran dry.", 0.3, 1)
        system.remember(first)
        again = ShortTermMemory("ada", "Another text, the same id.", 0.3, WorldTime(1, 11), id=first.id)
        system.remember_many([again, mem("Rain at last.", 0.3, 1, hour=12)])
        system.remember(mem("Frost.", 0.3, 1, hour=13))
        seqs = {m.content: seq for m, seq in store.select_page(db, "npc_id = ?", ["ada"], 10, forgotten=False)}
        assert seqs == {"The well ran dry.": 1, "Rain at last.": 3, "Frost.": 4}


def test_a_tick_records_its_jobs_in_one_statement_and_an_idle_consolidation_reads_nothing(
    engine: str, tmp_path: Path
) -> None:
    clock = SimClock()
    with logged_env(clock, engine, tmp_path) as env:
        system = MemorySystem(env, clock=clock)
        scheduler = SimScheduler(system)
        db = logged(env)
        for day in range(3):
            system.remember_many([mem(f"Day {day}: the oven cracked.", 0.9, day), mem(f"Day {day}: rain.", 0.3, day)])
            clock.seconds = day * 86400 + 23 * HOUR
            system.write_diaries(["ada"], day)
            clock.seconds = (day + 1) * 86400.0
            before = len(db.sql)
            scheduler.tick(clock())
            assert sum(s.startswith("INSERT INTO job_runs") for s in db.sql[before:]) == 1
        assert store.diaries_to_consolidate(db, 2) == []  # days 0 and 1 condensed
        for hour in (6, 12, 18):  # the same day: nothing new to consolidate, nothing read or written
            clock.seconds = 3 * 86400 + hour * HOUR
            before = len(db.sql)
            scheduler.tick(clock())
            assert db.sql[before:] == []
        system.write_diary("ada", 1)  # a past day's diary written again: the next run looks
        assert not system.nothing_to_consolidate()
        clock.seconds = 3 * 86400 + 20 * HOUR
        scheduler.tick(clock() + 4 * HOUR)
        assert system.nothing_to_consolidate()


def test_a_failed_consolidation_keeps_the_job_awake(engine: str, tmp_path: Path) -> None:
    from memory_sim.errors import AiError

    class Failing:
        def summarise(self, sentences: Any, n: int) -> str:
            raise AiError("the summariser is down")

    clock = SimClock()
    with logged_env(clock, engine, tmp_path) as env:
        system = MemorySystem(env, clock=clock, summariser=Failing())  # type: ignore[arg-type]
        system.remember_many([mem("The oven cracked.", 0.9, 0), mem("The oven was mended.", 0.8, 0, hour=11),
                              mem("Rain.", 0.3, 0, hour=12)])
        system.write_diaries(["ada"], 0)
        clock.seconds = 2 * 86400.0
        system.consolidate()
        assert store.diaries_to_consolidate(logged(env), 1) != [] and not system.nothing_to_consolidate()


def test_a_decay_pass_counts_the_index_only_when_it_may_be_over_its_cap(engine: str, tmp_path: Path) -> None:
    clock = SimClock()
    with logged_env(clock, engine, tmp_path) as env:
        roomy = MemorySystem(env, clock=clock)
        for day, importance in enumerate((0.71, 0.95, 0.72, 0.9, 0.93)):
            roomy.remember(mem(f"memory of day {day} worth {importance}", importance, day))
        db = logged(env)
        clock.seconds = 5 * 86400.0
        before = len(db.sql)
        roomy.decay_and_prune()
        assert not any(s.startswith("SELECT COUNT(*)") for s in db.sql[before:])  # 5 indexed, cap 5,000
        capped = MemorySystem(env, clock=clock, config=MemoryConfig(index_cap=3, cap_headroom=1.0))
        clock.seconds = 6 * 86400.0
        report = capped.decay_and_prune()
        assert report.unindexed == 2 and env.VECTORIZE.describe().vector_count == 3


def test_the_backgrounds_index_outcomes_reach_d1_in_one_statement_when_the_system_settles(
    engine: str, tmp_path: Path
) -> None:
    clock = SimClock()
    with logged_env(clock, engine, tmp_path) as env:
        system = MemorySystem(env, clock=clock)
        db = logged(env)
        ids = []
        for hour in range(1, 5):
            clock.seconds = hour * HOUR
            memory = mem(f"Hour {hour}: the bell rang for the harvest.", 0.9, 0, hour=hour)
            system.remember_many([memory], wait=False)
            ids.append(memory.id)
        system._background.settle()  # the vectors are in the index; D1 still says pending
        assert {store.memories_by_ids(db, ids)[i].index_state for i in ids} == {"pending"}
        before = len(db.sql)
        system.settle()
        assert [s.split(" SET ")[0] for s in db.sql[before:]] == ["UPDATE short_term_memories"]
        rows = store.memories_by_ids(db, ids)
        assert [(rows[i].index_state, rows[i].indexed_at) for i in ids] == [
            ("indexed", hour * HOUR) for hour in range(1, 5)]  # each at the hour it was indexed


def test_outcomes_a_dead_process_held_are_indexed_again_by_the_next_one(engine: str, tmp_path: Path) -> None:
    clock = SimClock()
    with logged_env(clock, engine, tmp_path) as env:
        dying = MemorySystem(env, clock=clock)
        memory = mem("The granary roof fell in.", 0.9, 0, hour=3)
        dying.remember_many([memory], wait=False)
        dying._background.settle()  # indexed, its outcome held: then the process dies
        clock.seconds = 5 * HOUR
        after = MemorySystem(env, clock=clock)
        assert after.retry_pending().embedded == 1
        assert after.memory(memory.id).index_state == "indexed" and after.stats()["pending"] == 0
