"""Rebuilding the vector index from D1, the source of truth (`memory-sim reembed`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_sim.bindings.vectorize import MetadataIndexType
from memory_sim.memory import indexing, store

if TYPE_CHECKING:
    from memory_sim.memory.system import MemorySystem

# What recall filters by; Cloudflare requires these before any vector is written.
METADATA_INDEXES: tuple[tuple[str, MetadataIndexType], ...] = (
    ("npcId", "string"),
    ("type", "string"),
    ("day", "number"),
    ("importance", "number"),
)


def recreate_index(system: "MemorySystem") -> None:
    """Drops and recreates the index for the current embedder (dimensions and model in its description)."""
    from memory_sim.embedding.index_model import describe_model

    env = system.env
    account = env.vectorize_account
    if account is None:
        raise ValueError("recreating the index needs the Vectorize account in the Env")
    name = env.VECTORIZE.name
    account.delete_index(name)
    account.create_index(name, env.embedder.dimensions, "cosine", describe_model(env.embedder))
    env.VECTORIZE = account.index(name)
    for prop, kind in METADATA_INDEXES:
        env.VECTORIZE.create_metadata_index(prop, kind)


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
