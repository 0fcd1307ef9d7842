"""Fast fixtures: the exact Vectorize oracle, sqlite3 D1 and the hashing embedder, all real implementations of
the contracts. `memory_faults.py` wraps them to inject failures."""

from __future__ import annotations

import pytest

from memory_sim.env import Env
from memory_sim.memory.models import MemoryConfig
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

from memory_env import build_env


@pytest.fixture
def clock() -> SimClock:
    return SimClock()


@pytest.fixture
def env(clock: SimClock) -> Env:
    return build_env(clock)


@pytest.fixture
def system(env: Env, clock: SimClock) -> MemorySystem:
    return MemorySystem(env, clock=clock, config=MemoryConfig())
