"""What a Worker's `env` holds, as the memory system sees it: the bindings and the embedder over the AI binding.

`memory_sim.env.Env` (local, Cloudflare or in memory) is one such object; the memory layer names only this shape,
so it depends on the bindings' contracts, never on how an Env is built.
"""

from __future__ import annotations

from typing import Protocol

from memory_sim.bindings.ai import Ai, Embedder
from memory_sim.bindings.d1 import D1Database
from memory_sim.bindings.vectorize import VectorizeAccount, VectorizeIndex


class WorkerEnv(Protocol):
    """The bindings a memory system runs on; any object holding them will do. `VECTORIZE` is reassigned when the
    index is recreated for a new model (memory/jobs/rebuild.py)."""

    VECTORIZE: VectorizeIndex
    DB: D1Database
    AI: Ai
    embedder: Embedder
    vectorize_account: VectorizeAccount | None
