"""Listing, fixing and forgetting memories.

`forget` is safe to re-run after a crash at any point: one D1 batch marks the rows `forgetting`, records why in
`forgotten`, erases their text, drops their outbox rows, and hides what was made from them (rederive.py: the
summaries drawing on them, the diaries quoting them); then the vectors are deleted from the index; then a second
batch marks the recorded rows `forgotten`, and the hidden summaries are made again from what is left.
A process that dies between the steps leaves `forgetting` rows, which every reader already
skips and which `finish` (run by `retry_pending`, hence by every writing verb) completes. `check` counts a
forgotten memory as deliberate: only its vector still being in the index is drift.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from memory_sim.bindings.d1 import D1Database, D1PreparedStatement
from memory_sim.bindings.limits import VECTORIZE_MAX_BATCH_BINDING
from memory_sim.bindings.worker_env import WorkerEnv
from memory_sim.errors import InvalidInput, NotFound, VectorizeError
from memory_sim.memory import rules
from memory_sim.memory.index_rule import reaches_index
from memory_sim.memory.ledger import store
from memory_sim.memory.models import StoredMemory
from memory_sim.memory.writing import rederive

MEMORY_STATES = rules.MEMORY_STATES
PAGE_LIMIT = rules.PAGE_LIMIT


@dataclass(frozen=True, slots=True)
class MemoryPage:
    """One page of `MemorySystem.memories`: the memories, and the cursor that asks for the next page."""

    memories: list[StoredMemory]
    cursor: str | None  # pass it back for the next page; None on the last one


def _cursor(value: Any) -> int:
    try:
        number = int(str(value))
    except ValueError:
        raise InvalidInput(f"cursor must be one a previous page returned, got {rules.shown(value)}") from None
    if number < 0:
        raise InvalidInput(f"cursor must be one a previous page returned, got {rules.shown(value)}")
    return number


def list_memories(
    env: WorkerEnv,
    npc_id: str,
    *,
    since_day: int | None = None,
    until_day: int | None = None,
    type: str | None = None,
    kind: str | None = None,
    state: str | None = None,
    limit: int = PAGE_LIMIT,
    cursor: str | None = None,
) -> MemoryPage:
    """One page of the NPC's memories in remember order. Forgotten ones only with `state="forgotten"`."""
    rules.text("npc_id", npc_id)
    where, values = ["npc_id = ?"], [npc_id]

    def add(condition: str, *bound: Any) -> None:
        where.append(condition)
        values.extend(bound)

    if since_day is not None:
        add("day >= ?", rules.day(since_day, "since_day"))
    if until_day is not None:
        add("day <= ?", rules.day(until_day, "until_day"))
    for column, value in (("type", type), ("kind", kind)):
        if value is not None:
            add(f"{column} = ?", rules.text(column, value))
    if state == "forgotten":
        add("index_state IN (?, ?)", *store.FORGOTTEN_STATES)
    elif state is not None:
        if state not in MEMORY_STATES:
            raise InvalidInput(f"state must be one of {', '.join(MEMORY_STATES)}, got {rules.shown(state)}")
        add("index_state = ?", state)
    if cursor is not None:
        add("seq > ?", _cursor(cursor))
    size = _limit(limit)
    rows = store.select_page(env.DB, " AND ".join(where), values, size + 1, forgotten=state == "forgotten")
    more = len(rows) > size
    rows = rows[:size]
    return MemoryPage([m for m, _ in rows], str(rows[-1][1]) if more else None)


def _limit(value: Any) -> int:
    try:
        return rules.top_k(value)
    except InvalidInput:
        raise InvalidInput(f"limit must be in 1..{PAGE_LIMIT}, got {rules.shown(value)}") from None


def one(env: WorkerEnv, memory_id: str) -> StoredMemory:
    rules.text("memory_id", memory_id)
    found = store.memories_by_ids(env.DB, [memory_id], forgotten=True)
    if memory_id not in found:
        raise NotFound(f"no memory {memory_id!r}")
    return found[memory_id]


DEFAULT_REASON = "forgotten on request"


def forget(env: WorkerEnv, ids: Sequence[str], reason: str, now: float) -> list[str]:
    """Forgets the memories (unknown ids refused first, already-forgotten ones skipped); returns the ids. What was
    made from them is reached in the same batch (rederive.py): the summaries drawing on them are hidden (made
    again by `rederive.finish`, or forgotten when no source is left) and the diaries quoting them rewritten.
    Their text is erased from D1: only the id, the NPC, the time and the reason stay."""
    rules.text("reason", reason)
    for memory_id in ids:
        rules.text("memory_id", memory_id)
    found = store.memories_by_ids(env.DB, list(ids), forgotten=True)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"no memory {missing[0]!r}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    todo = sorted({i for i in ids if found[i].index_state != "forgotten"})
    hidden: list[str] = []
    if todo:
        rows = [found[i] for i in todo]
        reach = rederive.plan(env.DB, rows)
        hidden = reach.hidden()
        env.DB.batch(store.set_state(env.DB, todo, "forgetting") + store.record_forgets(env.DB, rows, reason, now)
                     + store.erase_content(env.DB, todo) + store.dequeue(env.DB, todo)
                     + reach.statements(env.DB, now)
                     + [store.bump_revision(env.DB)])
    finish(env, todo + hidden)
    return todo


def finish(env: WorkerEnv, ids: Sequence[str] | None = None) -> int:
    """Deletes `forgetting` memories' vectors, then marks them `forgotten` (all such rows when `ids` is None).
    If the index is down they stay `forgetting` (invisible to readers) and the next call finishes them."""
    if ids is None:
        ids = [m.id for m in store.memories_in_state(env.DB, ["forgetting"])]
    ids = list(ids)
    try:
        for start in range(0, len(ids), VECTORIZE_MAX_BATCH_BINDING):
            env.VECTORIZE.delete_by_ids(ids[start : start + VECTORIZE_MAX_BATCH_BINDING])
    except VectorizeError:
        return 0
    recorded = sorted(store.recorded_forgets(env.DB, ids))  # the others are summaries rederive.finish makes again
    if recorded:
        env.DB.batch(store.set_state(env.DB, recorded, "forgotten"))
    return len(ids)


def forget_npc(env: WorkerEnv, npc_id: str, now: float) -> list[str]:
    """Forgets every memory of the NPC, then its registration, diaries and relationships."""
    rules.text("npc_id", npc_id)
    ids = [m.id for m in store.memories_of(env.DB, npc_id)]
    ids += [m.id for m in store.memories_in_state(env.DB, ["forgetting"]) if m.npc_id == npc_id]
    done = forget(env, ids, f"forget_npc {npc_id}", now) if ids else []
    env.DB.batch(_drop_npc(env.DB, npc_id))
    return done


def update_importance(env: WorkerEnv, memory_id: str, value: Any, now: float, threshold: float) -> StoredMemory:
    """Sets a memory's importance in D1; an indexed memory is queued so the index's copy follows, and so is one
    kept in D1 only that the index rule now admits (memory/index_rule.py, under `threshold`). One that falls
    below it stays in the index until decay drops it, as any indexed memory."""
    importance = rules.importance(value)
    memory = one(env, memory_id)
    if memory.index_state in store.FORGOTTEN_STATES:
        raise InvalidInput(f"memory {memory_id!r} is forgotten")
    statements = [store.set_importance(env.DB, memory_id, importance), store.bump_revision(env.DB)]
    admitted = memory.index_state == "none" and reaches_index(replace(memory, importance=importance), threshold)
    if memory.index_state in ("indexed", "pending") or admitted:
        statements += store.set_state(env.DB, [memory_id], "pending") + store.enqueue_many(env.DB, [memory_id], now)
    env.DB.batch(statements)
    return one(env, memory_id)


# --- statements (plain SQLite, as store.py's) ----------------------------------------------------------------


def _drop_npc(db: D1Database, npc_id: str) -> list[D1PreparedStatement]:
    """An NPC's registration, diaries and relationships (its memories are forgotten, not deleted)."""
    return [
        db.prepare("DELETE FROM npc_state WHERE npc_id = ?").bind(npc_id),
        store.bump_npc_revision(db),  # recall's cached profiles
        db.prepare("DELETE FROM diaries WHERE npc_id = ?").bind(npc_id),
        db.prepare("DELETE FROM relationships WHERE npc_id = ? OR other_id = ?").bind(npc_id, npc_id),
    ]
