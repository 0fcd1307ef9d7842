"""Fast fixtures: the exact Vectorize oracle, sqlite3 D1 and the hashing embedder, all real implementations of
the contracts. `faults.py` wraps them to inject failures."""

from __future__ import annotations

from typing import Callable

import pytest

from memory_sim.env import Env
from memory_sim.memory.models import MemoryConfig
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

DIMENSIONS = 64
METADATA_INDEXES = (("npcId", "string"), ("type", "string"), ("day", "number"), ("importance", "number"))


def build_env(clock: Callable[[], float], *, lag_s: float = 0.0, max_vectors: int | None = None) -> Env:
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.local.d1_sqlite import SqliteDatabase
    from memory_sim.local.vectorize_memory import MemoryAccount

    kwargs = {} if max_vectors is None else {"max_vectors": max_vectors}
    account = MemoryAccount(clock=clock, visibility_lag_s=lag_s, **kwargs)
    account.create_index("memories", DIMENSIONS, "cosine")
    index = account.index("memories")
    for prop, kind in METADATA_INDEXES:
        index.create_metadata_index(prop, kind)  # before any vector is written, as on Cloudflare
    embedder = HashingEmbedder(DIMENSIONS)
    return Env(VECTORIZE=index, DB=SqliteDatabase(), AI=None, embedder=embedder, vectorize_account=account)  # type: ignore[arg-type]


@pytest.fixture
def clock() -> SimClock:
    return SimClock()


@pytest.fixture
def env(clock: SimClock) -> Env:
    return build_env(clock)


@pytest.fixture
def system(env: Env, clock: SimClock) -> MemorySystem:
    return MemorySystem(env, clock=clock, config=MemoryConfig())
