"""Fast real backends for the memory tests: the exact Vectorize oracle, sqlite3 D1 and the hashing embedder."""

from __future__ import annotations

from collections.abc import Callable

from memory_sim.env import Env
from memory_sim.memory.writing.provision import MEMORY_METADATA_INDEXES as METADATA_INDEXES  # what the product creates

DIMENSIONS = 64
__all__ = ["DIMENSIONS", "METADATA_INDEXES", "build_env"]


def build_env(clock: Callable[[], float], *, lag_s: float = 0.0, max_vectors: int | None = None) -> Env:
    return Env.in_memory(clock, dimensions=DIMENSIONS, visibility_lag_s=lag_s, max_vectors=max_vectors)
