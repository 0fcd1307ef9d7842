"""Fast real backends for the memory tests: the exact Vectorize oracle, sqlite3 D1 and the hashing embedder."""

from __future__ import annotations

from typing import Callable

from memory_sim.env import Env
from memory_sim.local.env import MEMORY_METADATA_INDEXES as METADATA_INDEXES  # what the product creates

DIMENSIONS = 64


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
