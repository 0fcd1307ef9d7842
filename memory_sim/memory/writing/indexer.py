"""The one way memories go into the vector index (and out of it).

    report = index(env, config, ids, now, job="retry_pending", counter="retries")

remember, index_memory, retry_pending, consolidate's summaries, decay's re-embeds and `reembed` all call `index`,
so they share one set of rules:

- **Embed once**: one embedding call for all the rows; when the write is repeated NPC by NPC (isolation.py),
  the vectors already made are reused.
- **Room first**: when the rows would take the index past `config.index_cap`, the lowest-valued indexed memories
  are dropped first (they stay in D1, `unindexed`); rows not yet in the index are never dropped for their own room.
- **Index full**: when the index itself refuses the write as full (its real cap is lower than `index_cap`), prune
  harder once, below D1's count of indexed memories, and write again; rows that still do not fit are postponed
  like any other failure, and their next attempt finds the room.
- **Queue on failure**: a memory to index is written `pending`; `retry_pending` takes a `pending` row with no
  outbox row as never attempted, so a process that dies before its attempt leaves nothing behind.
- **Postpone**: an outage (`EmbeddingUnavailable`, `VectorizeUnavailable`) postpones every row, with the outage's
  message; any other failure postpones only the rows of the NPC it came from (isolation.py). A postponed row is
  `pending` in D1 with an outbox row: attempts + 1, next attempt `now + retry_delay_s(attempts)`, last error.
- **One D1 batch** records the outcome: written rows `indexed` and out of the outbox (and the caller's counter),
  postponed ones rescheduled, outbox rows of memories that no longer belong in the index (deleted, or dropped
  since they were queued) removed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memory_sim.bindings.d1 import D1Database, D1PreparedStatement
from memory_sim.bindings.vectorize import Vector
from memory_sim.bindings.vectorize_validation import CODE_FULL
from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.errors import VectorizeError, VectorizeInputError
from memory_sim.memory.ledger import store
from memory_sim.memory.models import StoredMemory, WorldTime
from memory_sim.memory.scoring import plan_cap_prune, retry_delay_s
from memory_sim.memory.writing import indexing
from memory_sim.memory.writing.isolation import OUTAGES, Outcome, each_npc

if TYPE_CHECKING:
    from memory_sim.memory.config import MemoryConfig


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What one `index` call did."""

    indexed: list[str] = field(default_factory=list)
    postponed: list[str] = field(default_factory=list)  # pending in the outbox, backed off
    errors: dict[str, str] = field(default_factory=dict)  # NPC id -> why its rows alone were postponed
    outage: Exception | None = None  # the outage that postponed every row
    full: bool = False  # the index refused a write as full: pruned harder and wrote again
    pruned: int = 0  # vectors dropped from the index to make room (they stay in D1, `unindexed`)


WANTED = ("pending", "indexed")  # the states of memories that belong in the index


def index(
    env: WorkerEnv,
    config: MemoryConfig,
    ids: Sequence[str],
    now: float,
    *,
    job: str = "index",
    counter: str | None = None,
    known: dict[str, StoredMemory] | None = None,
    rows_at_most: int | None = None,
    hold: Callable[[Sequence[str], float], None] | None = None,
) -> IndexReport:
    """Embeds and upserts the memories `ids` names that D1 says belong in the index (pending or indexed), then
    records the outcome in one D1 batch. `counter` (e.g. "retries") counts the rows written; `job` names the
    caller in logs. `known`: rows the caller has just written in D1 and need not be read again (their states
    are those written, with no outbox row); `rows_at_most`: an upper bound on D1's memories, which spares counting
    them while the index cannot be near its cap; `hold`: takes a plain outcome (known `pending` rows now
    indexed, nothing else to write) instead of D1, for the caller to write later (writing/held.py)."""
    known = {i: known[i] for i in ids if i in known} if known else {}
    unknown = [i for i in ids if i not in known]
    found = {**store.memories_by_ids(env.DB, unknown), **known} if unknown else known
    rows = [r for r in found.values() if r.index_state in WANTED]
    wanted = {r.id for r in rows}
    stale = [i for i in dict.fromkeys(ids) if i not in wanted]  # deleted, or dropped from the index since queued
    writer = _Writer(env, config, now)
    outcome: Outcome[StoredMemory] = Outcome()
    outage: Exception | None = None
    if rows:
        if rows_at_most is None or rows_at_most + len(rows) > config.index_cap:
            writer.drop(make_room(env, config, rows, now))
        try:
            outcome = each_npc(job, writer.kept(rows), lambda r: r.npc_id, writer)
        except OUTAGES as exc:
            outcome, outage = Outcome(held_back=writer.kept(rows)), exc
    reason = (lambda _: str(outage)) if outage is not None else (lambda r: outcome.failed[r.npc_id])
    done = [r.id for r in writer.kept(outcome.done)]
    held_back = writer.kept(outcome.held_back)
    # rows just written as pending are already among the memories hybrid recall ranks: no revision to check
    unchanged = bool(done) and all(i in known and known[i].index_state in store.SEMANTIC_STATES for i in done)
    dequeued = [i for i in done + stale if i not in known]  # known: never queued
    report = IndexReport(done, [r.id for r in held_back], dict(outcome.failed), outage, writer.full,
                         len(writer.dropped))
    if hold is not None and unchanged and not dequeued and not counter and not held_back:
        hold(done, now)
        return report
    statements = store.set_state(env.DB, done, "indexed", now, set_unchanged=unchanged)
    statements += store.dequeue(env.DB, dequeued)
    if counter and done:
        statements.append(store.bump(env.DB, counter, len(done)))
    statements += postpone(env.DB, config, held_back, now, reason)
    if statements:
        env.DB.batch(statements)
    return report


def postpone(
    db: D1Database, config: MemoryConfig, rows: Sequence[StoredMemory], now: float, why: Callable[[StoredMemory], str]
) -> list[D1PreparedStatement]:
    """The one backoff rule, as statements: each row `pending` with an outbox row (made if missing), attempts + 1,
    the next attempt after `retry_delay_s(attempts)`, and why it failed."""
    if not rows:
        return []
    ids = [r.id for r in rows]
    attempts = store.outbox_attempts(db, ids)
    statements = store.set_state(db, [r.id for r in rows if r.index_state != "pending"], "pending")
    statements += store.enqueue_many(db, [i for i in ids if i not in attempts], now)
    for row in rows:
        tries = attempts.get(row.id, 0) + 1
        statements.append(store.reschedule(db, row.id, tries, now + retry_delay_s(tries, config), why(row)))
    return statements + [store.bump(db, "embedding_failures", len(rows))]


def is_index_full(error: VectorizeError) -> bool:
    """The index refused a write for want of room (the project's own code, bindings/vectorize_codes.py); the
    message must say "full" too, so no other refusal ever makes the memory system prune."""
    return error.code == CODE_FULL and "full" in error.detail.lower()


class _Writer:
    """Writes rows' vectors for one `index` call (each_npc's action): each row embedded once, the index-full
    rule applied once; remembers which vectors were dropped to make room, so none of them is written."""

    def __init__(self, env: WorkerEnv, config: MemoryConfig, now: float) -> None:
        self.env, self.config, self.now = env, config, now
        self.vectors: dict[str, Vector] = {}
        self.dropped: set[str] = set()
        self.full = False

    def drop(self, ids: Sequence[str]) -> None:
        self.dropped.update(ids)

    def kept(self, rows: Sequence[StoredMemory]) -> list[StoredMemory]:
        return [r for r in rows if r.id not in self.dropped]

    def __call__(self, group: Sequence[StoredMemory]) -> None:
        rows = self.kept(group)
        vectors = self._vectors(rows)
        try:
            indexing.upsert(self.env, vectors)
        except VectorizeInputError as exc:
            if not is_index_full(exc) or self.full:
                raise  # full again after pruning harder: these rows wait for their next attempt
            self.full = True
            fresh = sum(1 for r in rows if r.index_state != "indexed")
            indexed = store.count_memories(self.env.DB, "index_state = 'indexed'")
            self.drop(make_room(self.env, self.config, rows, self.now, cap=max(1, indexed - fresh)))
            indexing.upsert(self.env, [v for v in vectors if v.id not in self.dropped])

    def _vectors(self, rows: Sequence[StoredMemory]) -> list[Vector]:
        missing = [r for r in rows if r.id not in self.vectors]
        self.vectors.update((v.id, v) for v in indexing.vectors_for(self.env, missing))
        return [self.vectors[r.id] for r in rows]


# --- room in the index -------------------------------------------------------------------------------------


def make_room(
    env: WorkerEnv, config: MemoryConfig, rows: Sequence[StoredMemory], now: float, cap: int | None = None
) -> list[str]:
    """The index's size cap: when writing `rows` would take the index past it (`cap`, else `config.index_cap`),
    the lowest-valued indexed memories are dropped first (they stay in D1), down to `cap_headroom` of the cap.
    Rows not yet in the index are never dropped for their own room; rows already in it compete with the others.
    Returns the ids dropped."""
    config = config if cap is None else config.replace(index_cap=cap)
    fresh = {r.id for r in rows if r.index_state != "indexed"}
    if store.count_memories(env.DB, "index_state = 'indexed'") + len(fresh) <= config.index_cap:
        return []
    held = [m for m in store.memories_in_state(env.DB, ["indexed"]) if m.id not in fresh]
    drop = plan_cap_prune(held, WorldTime.from_seconds(now).day, len(fresh), config)
    return drop if unindex(env, drop, counter="cap_prunes") else []


def unindex(env: WorkerEnv, ids: Sequence[str], counter: str) -> int:
    """Deletes the vectors and marks the rows `unindexed`, out of the outbox (they stay in D1); returns how many
    (0 if the index failed)."""
    if not ids:
        return 0
    try:
        # An id Vectorize cannot hold (a row an older version wrote) is in no index: nothing to delete there.
        indexing.delete_vectors(env, [i for i in ids if indexing.is_vector_id(i)])
    except VectorizeError:
        # The index is failing: the rows stay 'indexed' in D1, so the next decay or cap pass tries again.
        env.DB.batch([store.bump(env.DB, "unindex_failures", len(ids))])
        return 0
    statements = store.set_state(env.DB, ids, "unindexed") + store.dequeue(env.DB, ids)
    env.DB.batch(statements + [store.bump(env.DB, counter, len(ids))])
    return len(ids)
