"""Rebuilding the vector index from D1, the source of truth (`memory-sim reembed`).

After a change of model, `queue_for_reindex(db)`, then open the data folder with
`Env.from_settings(settings, rebuild_index=True, before_rebuild=queue_for_reindex)` (the index is dropped and
recreated for the new embedder instead of refused), then `reembed(system)`. Queueing first is what makes a crash
harmless: every memory the old index held is `pending` in D1 with an outbox row before the index is dropped, so
the next open retries whatever the dead process had not rebuilt.
"""

from __future__ import annotations

from memory_sim.bindings.d1 import D1Database
from memory_sim.memory.jobs.host import MemoryHost
from memory_sim.memory.ledger import store
from memory_sim.memory.writing import indexer


def queue_for_reindex(db: D1Database) -> int:
    """Marks every memory the index should hold (indexed or pending) `pending` and queues it, in one D1 batch.
    Returns how many."""
    from memory_sim.memory.ledger.schema import migrate

    migrate(db, applied_at=0.0)
    ids = [m.id for m in store.memories_in_state(db, ["indexed", "pending"])]
    if ids:
        db.batch(store.set_state(db, ids, "pending") + store.enqueue_many(db, ids, store.world_seconds(db)))
    return len(ids)


def recreate_index(system: MemoryHost) -> None:
    """Drops and recreates the index for the current embedder (dimensions and model in its description)."""
    from memory_sim.memory.writing.provision import recreate_index as recreate

    env = system.env
    account = env.vectorize_account
    if account is None:
        raise ValueError("recreating the index needs the Vectorize account in the Env")
    env.VECTORIZE = recreate(account, env.VECTORIZE.name, env.embedder)


def reembed(system: MemoryHost, recreate: bool = False, batch: int = 256) -> int:
    """Embeds every memory D1 says belongs in the index (indexed or pending) and upserts it, `batch` at a time,
    through memory/writing/indexer.py: written ones leave the outbox; a row that fails is postponed there (the retry job
    finishes it). An outage stops the rebuild: the batch it hit is postponed, the rest stay as they were (still
    queued after `queue_for_reindex`), and the outage is raised. Returns how many were written."""
    db = system.env.DB
    if recreate:
        queue_for_reindex(db)
        recreate_index(system)
    ids = [r.id for r in store.memories_in_state(db, ["indexed", "pending"])]
    now = system.clock()
    written = 0
    for start in range(0, len(ids), batch):
        report = indexer.index(system.env, system.config, ids[start : start + batch], now, job="reembed")
        written += len(report.indexed)
        if report.outage is not None:
            raise report.outage
    return written
