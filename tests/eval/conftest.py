"""Fast real parts for the evaluation tests: the exact Vectorize oracle, D1 on DuckDB (the engine whose rowid
moved rows out of remember order) or sqlite3, and the hashing embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

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
