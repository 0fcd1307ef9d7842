"""Embedding memories and writing them to the vector index: the one place the memory system writes vectors.

Vector metadata is the design's: npcId, type, day, importance, decayFactor, textPreview (first 200 chars).
The full text stays in D1; the index holds only what recall filters and ranks by.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_sim.bindings.limits import VECTORIZE_MAX_BATCH_BINDING, VECTORIZE_MAX_ID_BYTES
from memory_sim.bindings.vectorize import Metadata, Vector
from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.memory.models import TEXT_PREVIEW_CHARS, StoredMemory


def vector_metadata(memory: StoredMemory, decay_factor: float | None = None) -> Metadata:
    return {
        "npcId": memory.npc_id,
        "type": memory.type,
        "day": memory.day,
        "importance": round(memory.importance, 4),
        "decayFactor": round(memory.decay_factor if decay_factor is None else decay_factor, 6),
        "textPreview": memory.content[:TEXT_PREVIEW_CHARS],
    }


def vectors_for(
    env: WorkerEnv, memories: Sequence[StoredMemory], decay: dict[str, float] | None = None
) -> list[Vector]:
    """The memories' vectors, embedded in one call (none for no memories)."""
    if not memories:
        return []
    values = env.embedder.embed([m.content for m in memories])
    decay = decay or {}
    return [
        Vector(m.id, [float(x) for x in row], vector_metadata(m, decay.get(m.id)))
        for m, row in zip(memories, values, strict=True)
    ]


def upsert(env: WorkerEnv, vectors: Sequence[Vector]) -> None:
    for start in range(0, len(vectors), VECTORIZE_MAX_BATCH_BINDING):
        env.VECTORIZE.upsert(list(vectors[start : start + VECTORIZE_MAX_BATCH_BINDING]))


def embed_and_upsert(env: WorkerEnv, memories: Sequence[StoredMemory], decay: dict[str, float] | None = None) -> None:
    """Embeds the texts in one call and upserts in batches; raises what the bindings raise (the memory system
    indexes through memory/writing/indexer.py, which decides between outbox and retry)."""
    upsert(env, vectors_for(env, memories, decay))


def delete_vectors(env: WorkerEnv, ids: Sequence[str]) -> None:
    for start in range(0, len(ids), VECTORIZE_MAX_BATCH_BINDING):
        env.VECTORIZE.delete_by_ids(list(ids[start : start + VECTORIZE_MAX_BATCH_BINDING]))


def is_vector_id(memory_id: str) -> bool:
    """Whether Vectorize can hold this id (1..64 bytes); memory ids are made to be, rows of older versions may
    not be."""
    return 0 < len(memory_id.encode("utf-8", "surrogatepass")) <= VECTORIZE_MAX_ID_BYTES
