"""Rebuilding the vector index from D1, the source of truth (`memory-sim reembed`).

After a change of model, open the data folder with `Env.from_settings(settings, rebuild_index=True)` (the index
is dropped and recreated for the new embedder instead of refused), then `reembed(system)`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_sim.memory import indexing, store

if TYPE_CHECKING:
    from memory_sim.memory.system import MemorySystem

def recreate_index(system: "MemorySystem") -> None:
    """Drops and recreates the index for the current embedder (dimensions and model in its description)."""
    from memory_sim.memory.provision import recreate_index as recreate

    env = system.env
    account = env.vectorize_account
    if account is None:
        raise ValueError("recreating the index needs the Vectorize account in the Env")
    env.VECTORIZE = recreate(account, env.VECTORIZE.name, env.embedder)


def reembed(system: "MemorySystem", recreate: bool = False, batch: int = 256) -> int:
    """Embeds every memory D1 says belongs in the index (indexed or pending) and upserts it; clears the outbox
    for them. Returns how many were written."""
    if recreate:
        recreate_index(system)
    db = system.env.DB
    rows = store.memories_in_state(db, ["indexed", "pending"])
    now = system.clock()
    for start in range(0, len(rows), batch):
        chunk = rows[start : start + batch]
        indexing.embed_and_upsert(system.env, chunk)
        ids = [r.id for r in chunk]
        db.batch(store.set_state(db, ids, "indexed", now) + store.dequeue(db, ids))
    return len(rows)
