"""`remember_many`'s D1 write: each memory's state key (keying.py) and the rows, in one transaction (one batch:
the multi-row inserts and the remember-order counter). A memory remembered twice is kept once, first write wins."""

from __future__ import annotations

from collections.abc import Sequence

from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.errors import D1Error
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, StoredMemory
from memory_sim.memory.writing.keying import KeyRegistry, env_embed, keys_for


def write(
    env: WorkerEnv, memories: Sequence[ShortTermMemory], decay: float, states: dict[str, str], registry: KeyRegistry
) -> tuple[dict[str, StoredMemory], int | None]:
    """Stores the memories with their keys. Returns the rows written, as D1 now holds them (one stored before is
    left out), and an upper bound on the rows in the table (`store.inserted_rows`)."""
    db = env.DB
    keys = keys_for(memories, registry, env_embed(env))
    try:
        results = db.batch(store.insert_memories(db, memories, decay, states, keys=keys))
    except D1Error as exc:
        if not store.is_memory_already_stored(exc):
            raise
        results = db.batch(store.insert_memories(db, memories, decay, states, again=True, keys=keys))
    return store.inserted_rows(results, memories, decay, states, keys)
