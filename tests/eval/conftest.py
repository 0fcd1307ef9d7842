"""Fast real parts for the evaluation tests: the exact Vectorize oracle, D1 on DuckDB (the engine whose rowid
moved rows out of remember order) or sqlite3, and the hashing embedder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from memory_sim.env import Env
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

DIMENSIONS = 64


def fast_env(clock: SimClock, folder: Path, engine: str) -> Env:
    from memory_sim.builder import open_d1_account
    from memory_sim.settings import Settings

    db = open_d1_account(Settings.load(environ={}, data_dir=folder, d1_engine=engine)).create("memory")
    return Env.in_memory(clock, dimensions=DIMENSIONS, db=db)


@pytest.fixture(params=["duckdb", "sqlite"])
def system(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemorySystem]:
    clock = SimClock()
    env = fast_env(clock, tmp_path, request.param)
    yield MemorySystem(env, clock=clock)
    env.close()


@pytest.fixture
def fresh(tmp_path: Path) -> Callable[[str], AbstractContextManager[tuple[MemorySystem, SimClock]]]:
    """Opens a fresh system (sqlite3 D1 in its own folder) per name: what `village.measure` runs the village on."""

    @contextmanager
    def open_system(name: str) -> Iterator[tuple[MemorySystem, SimClock]]:
        clock = SimClock()
        env = fast_env(clock, tmp_path / name, "sqlite")
        try:
            yield MemorySystem(env, clock=clock), clock
        finally:
            env.close()

    return open_system
