"""`memory-sim demo --timings` and `memory-sim bench --demo`'s split of the wall time: the floor (the model's
forward), the start, and the time inside D1, from a real demo run in a fresh process on the default stack."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from memory_sim.bench.d1_count import CountingD1
from memory_sim.bench.demo import demo_breakdown, markdown_row
from memory_sim.env import Env
from memory_sim.errors import D1Error


class SlowD1:
    """A D1 whose every call takes a known least time (the engine's own, under it); `all()` calls of
    `together` threads first wait for each other, so that they overlap."""

    def __init__(self, inner: Any, pause: float, together: int = 1) -> None:
        self.inner, self.pause, self.meet = inner, pause, threading.Barrier(together)

    def prepare(self, sql: str) -> Any:
        return _SlowStatement(self.inner.prepare(sql), self.pause, self.meet)

    def batch(self, statements: Any) -> Any:
        time.sleep(self.pause)
        return self.inner.batch([s.inner for s in statements])

    def exec(self, sql: str) -> Any:
        time.sleep(self.pause)
        return self.inner.exec(sql)


class _SlowStatement:
    def __init__(self, inner: Any, pause: float, meet: threading.Barrier) -> None:
        self.inner, self.pause, self.meet = inner, pause, meet

    def bind(self, *values: Any) -> _SlowStatement:
        return _SlowStatement(self.inner.bind(*values), self.pause, self.meet)

    def all(self) -> Any:
        self.meet.wait(timeout=10)
        time.sleep(self.pause)
        return self.inner.all()

    def first(self, column: str | None = None) -> Any:
        time.sleep(self.pause)
        return self.inner.first(column)

    def run(self) -> Any:
        time.sleep(self.pause)
        return self.inner.run()

    def raw(self, column_names: bool = False) -> Any:
        time.sleep(self.pause)
        return self.inner.raw(column_names)


def test_counting_d1_times_the_wall_time_a_call_is_in_progress_failed_ones_too() -> None:
    pause = 0.5  # long beside what the calls themselves take, even on a loaded machine
    with Env.in_memory() as env:
        db = CountingD1(SlowD1(env.DB, pause, together=2))
        db.exec("CREATE TABLE t (n INTEGER)")
        db.batch([db.prepare("INSERT INTO t (n) VALUES (?)").bind(k) for k in range(3)])
        workers = [threading.Thread(target=lambda: db.prepare("SELECT n FROM t").all()) for _ in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        with pytest.raises(D1Error):
            db.prepare("SELECT nope FROM t").first()
        assert (db.statements, db.round_trips) == (1 + 3 + 2 + 1, 5)
        # exec, batch, the two overlapping reads (once), the failed read: four pauses, not five
        assert 4 * pause <= db.busy_seconds < 5 * pause


@pytest.mark.slow
def test_the_demo_splits_its_wall_time_into_floor_start_and_d1() -> None:
    d = demo_breakdown(days=1, npcs=4)
    assert d["memories"] > 0 and d["d1_statements"] > 0 and d["d1_round_trips"] > 0
    assert 0 < d["floor_model_forward_s"] < d["wall_s"] and d["rest_s"] == pytest.approx(
        d["wall_s"] - d["floor_model_forward_s"], abs=0.011)
    assert 0 < d["start_s"] < d["wall_s"]  # python, imports, the folder opened: before the first hour
    assert 0 < d["d1_s"] < d["wall_s"]  # wall time with a D1 call in progress, from either thread
    row = markdown_row(d)
    assert f"the start {d['start_s']} s" in row and f"in D1 {d['d1_s']} s" in row
