"""Fast real parts for the evaluation tests: the exact Vectorize oracle, D1 on DuckDB (the engine whose rowid
moved rows out of remember order) or sqlite3, and the hashing embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from memory_sim.env import Env
from memory_sim.local.env import MEMORY_METADATA_INDEXES as METADATA_INDEXES  # what the product creates
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

DIMENSIONS = 64


def fast_env(clock: SimClock, folder: Path, engine: str) -> Env:
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.local.d1_account import D1Account
    from memory_sim.local.vectorize_memory import MemoryAccount

    account = MemoryAccount(clock=clock)
    account.create_index("memories", DIMENSIONS, "cosine")
    index = account.index("memories")
    for prop, kind in METADATA_INDEXES:
        index.create_metadata_index(prop, kind)
    db = D1Account(folder, engine=engine).create("memory")  # type: ignore[arg-type]
    env = Env(VECTORIZE=index, DB=db, AI=None, embedder=HashingEmbedder(DIMENSIONS), vectorize_account=account)  # type: ignore[arg-type]
    env.close_hooks.append(db.close)
    return env


@pytest.fixture(params=["duckdb", "sqlite"])
def system(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemorySystem]:
    clock = SimClock()
    env = fast_env(clock, tmp_path, request.param)
    yield MemorySystem(env, clock=clock)
    env.close()
