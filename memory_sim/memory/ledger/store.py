"""Every statement the memory system runs on D1, in one place, as plain SQLite (see schema.py).

Functions take the `D1Database` and typed values and return typed rows; nothing here embeds or ranks.
Lists of ids are chunked under D1's 100-bound-parameter limit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from memory_sim.bindings.d1 import D1Database, D1PreparedStatement, D1Result
from memory_sim.bindings.limits import D1_MAX_BOUND_PARAMETERS
from memory_sim.errors import D1Error
from memory_sim.memory.models import KeyOf, ShortTermMemory, StoredMemory

_COLUMNS = (
    "id, npc_id, content, importance, day, hour, type, kind, decay_factor, index_state, indexed_at, decayed_day, about,"
    " state_key, key_confidence, key_source, state_value"
)
_CHUNK = D1_MAX_BOUND_PARAMETERS - 10  # room for the other parameters of the statement


def _chunks(items: Sequence[str], size: int = _CHUNK) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _stored(row: dict[str, Any]) -> StoredMemory:
    return StoredMemory(
        id=row["id"],
        npc_id=row["npc_id"],
        content=row["content"],
        importance=float(row["importance"]),
        day=int(row["day"]),
        hour=int(row["hour"]),
        type=row["type"],
        kind=row["kind"],
        decay_factor=float(row["decay_factor"]),
        index_state=row["index_state"],
        indexed_at=None if row["indexed_at"] is None else float(row["indexed_at"]),
        decayed_day=int(row["decayed_day"]),
        about=tuple(a for a in str(row["about"] or "").split(",") if a),
        state_key=row.get("state_key"),
        key_confidence=None if row.get("key_confidence") is None else float(row["key_confidence"]),
        key_source=row.get("key_source"),
        state_value=row.get("state_value"),
    )


FORGOTTEN_STATES = (
    "forgetting",
    "forgotten",
)  # forget(): gone for every reader but `memory(id)` and `memories(state=...)`
_VISIBLE = "index_state NOT IN ('forgetting', 'forgotten')"


def _select(
    db: D1Database, where: str, *values: Any, order: str = "day, hour, id", forgotten: bool = False
) -> list[StoredMemory]:
    """Rows matching `where`; forgotten ones (and those being forgotten) only when asked for."""
    where = where if forgotten else f"({where}) AND {_VISIBLE}"
    sql = f"SELECT {_COLUMNS} FROM short_term_memories WHERE {where} ORDER BY {order}"
    return [_stored(row) for row in db.prepare(sql).bind(*values).all().results]


# --- memories ----------------------------------------------------------------------------------------------


_INSERT_COLUMNS = (
    "id, npc_id, content, importance, day, hour, type, about, kind, decay_factor, decayed_day, index_state,"
    " state_key, key_confidence, key_source, state_value, seq"
)
NO_KEY = KeyOf(None, None, None)
# The remember counter: the highest `seq` given (schema migration 10 indexes it). Rows are never deleted, so it
# only grows, and a new row's seq is above every row's before it.
LAST_SEQ = "COALESCE((SELECT MAX(seq) FROM short_term_memories), 0)"
_ROWS_PER_INSERT = D1_MAX_BOUND_PARAMETERS // 15  # bound values a row (6 rows a statement)


def _row(decay: float, position: int) -> str:
    """One row's VALUES: the batch's decay factor and the row's position are numbers this module makes, written
    as literals (fewer bound values a row: more rows a statement). seq = the counter before the statement + the
    row's position in it (SQLite computes every row of a VALUES list that reads the table before inserting
    any)."""
    return f"(?, ?, ?, ?, ?, ?, ?, ?, ?, {float(decay)!r}, ?, ?, ?, ?, ?, ?, {LAST_SEQ} + {int(position)})"


def _memory_values(memory: ShortTermMemory, state: str, key: KeyOf) -> list[Any]:
    when = memory.world_time
    return [memory.id, memory.npc_id, memory.content, float(memory.importance), when.day, when.hour, memory.type,
            ",".join(memory.about), memory.kind, when.day, state, key.key, key.confidence, key.source, key.value]


def insert_memories(
    db: D1Database, memories: Sequence[ShortTermMemory], decay: float, states: dict[str, str], *, again: bool = False,
    keys: Mapping[str, KeyOf] | None = None,
) -> list[D1PreparedStatement]:
    """Multi-row inserts for a batch, keys and state values included, 6 rows a statement (D1's 100 bound
    parameters). Each row's `seq` (remember order, monotonic per database) is the counter (`LAST_SEQ`, the
    highest seq) before its statement + its position there: no second statement moves a counter. All in the
    caller's one transaction, plain SQLite as D1 runs it. The inserts return the `id` and `seq` of each row they
    wrote (`inserted_rows`). (Rows as one JSON parameter through `json_each` would make one statement of a
    batch, but cost the DuckDB engine 5-10 ms a statement against 1-2.)

    A memory remembered twice is kept once (first write wins): the first try is a plain INSERT, which fails
    the whole batch on an id already stored (`is_memory_already_stored`); the caller then runs the statements
    made with `again=True`, which skip such rows. (ON CONFLICT costs DuckDB about 3 ms a statement, and a
    memory is seldom remembered twice.)"""
    statements = []
    conflict = " ON CONFLICT (id) DO NOTHING" if again else ""
    for start in range(0, len(memories), _ROWS_PER_INSERT):
        chunk = memories[start : start + _ROWS_PER_INSERT]
        rows = ", ".join(_row(decay, i) for i in range(1, 1 + len(chunk)))
        values = [v for m in chunk for v in _memory_values(m, states.get(m.id, "none"), (keys or {}).get(m.id, NO_KEY))]
        sql = f"INSERT INTO short_term_memories ({_INSERT_COLUMNS}) VALUES {rows}{conflict} RETURNING id, seq"
        statements.append(db.prepare(sql).bind(*values))
    return statements


def is_memory_already_stored(error: D1Error) -> bool:
    """The plain insert of `insert_memories` met an id D1 holds already (SQLite's words, as D1 says them)."""
    return "UNIQUE constraint failed: short_term_memories.id" in str(error)


def inserted_rows(
    results: Sequence[D1Result], memories: Sequence[ShortTermMemory], decay: float, states: dict[str, str],
    keys: Mapping[str, KeyOf] | None = None,
) -> tuple[dict[str, StoredMemory], int | None]:
    """From the results of `insert_memories`' statements (a batch of them alone): the rows written, as D1 now
    holds them (a memory already there is left out: its row is D1's first write), and the counter after the
    batch, the highest `seq` written: an upper bound on the rows in the table (None when no row was written)."""
    returned = [r for result in results for r in result.results]
    written = {str(r["id"]) for r in returned}
    rows = {m.id: _stored_new(m, decay, states.get(m.id, "none"), (keys or {}).get(m.id, NO_KEY))
            for m in memories if m.id in written}
    return rows, max((int(r["seq"]) for r in returned), default=None)


def _stored_new(memory: ShortTermMemory, decay: float, state: str, key: KeyOf) -> StoredMemory:
    when = memory.world_time
    return StoredMemory(memory.id, memory.npc_id, memory.content, float(memory.importance), when.day, when.hour,
                        memory.type, memory.kind, decay, state, None, when.day, memory.about, key.key,
                        key.confidence, key.source, key.value)


def enqueue_many(db: D1Database, ids: Sequence[str], next_attempt_at: float) -> list[D1PreparedStatement]:
    statements = []
    for chunk in _chunks(list(ids), 45):
        rows = ", ".join("(?, 0, ?)" for _ in chunk)
        values = [v for memory_id in chunk for v in (memory_id, next_attempt_at)]
        sql = f"INSERT INTO embedding_outbox (memory_id, attempts, next_attempt_at) VALUES {rows}"
        statements.append(db.prepare(sql + " ON CONFLICT (memory_id) DO NOTHING").bind(*values))
    return statements


def memories_by_ids(db: D1Database, ids: Sequence[str], *, forgotten: bool = False) -> dict[str, StoredMemory]:
    found: dict[str, StoredMemory] = {}
    for chunk in _chunks(list(ids)):
        marks = ", ".join("?" for _ in chunk)
        found.update((m.id, m) for m in _select(db, f"id IN ({marks})", *chunk, forgotten=forgotten))
    return found


def select_page(
    db: D1Database, where: str, values: Sequence[Any], limit: int, *, forgotten: bool
) -> list[tuple[StoredMemory, int]]:
    """Rows in remember order with their `seq` (the next page's cursor)."""
    where = where if forgotten else f"({where}) AND {_VISIBLE}"
    sql = f"SELECT {_COLUMNS}, seq FROM short_term_memories WHERE {where} ORDER BY seq, id LIMIT {int(limit)}"
    return [(_stored(r), int(r["seq"] or 0)) for r in db.prepare(sql).bind(*values).all().results]


def set_importance(db: D1Database, memory_id: str, importance: float) -> D1PreparedStatement:
    return db.prepare("UPDATE short_term_memories SET importance = ? WHERE id = ?").bind(importance, memory_id)


def memories_of(db: D1Database, npc_id: str, day: int | None = None) -> list[StoredMemory]:
    if day is None:
        return _select(db, "npc_id = ?", npc_id)
    return _select(db, "npc_id = ? AND day = ?", npc_id, day)


def memories_of_days(db: D1Database, npc_id: str, days: Sequence[int]) -> list[StoredMemory]:
    """One NPC's memories of some days, in `memories_of` order."""
    found: list[StoredMemory] = []
    unique = sorted(set(days))
    for start in range(0, len(unique), _CHUNK):
        chunk = unique[start : start + _CHUNK]
        found += _select(db, f"npc_id = ? AND day IN ({', '.join('?' for _ in chunk)})", npc_id, *chunk)
    return found


def memories_between_days(db: D1Database, npc_id: str, first: int, last: int, limit: int) -> list[StoredMemory]:
    """One NPC's memories of sim days `first`..`last` (a question's time span), newest first, at most `limit`."""
    return _select(db, "npc_id = ? AND day >= ? AND day <= ?", npc_id, first, last,
                   order=f"day DESC, hour DESC, id LIMIT {int(limit)}")


def memories_of_day(db: D1Database, npc_ids: Sequence[str], day: int) -> dict[str, list[StoredMemory]]:
    """The NPCs' memories of one day, each NPC's in `memories_of` order."""
    found: dict[str, list[StoredMemory]] = {}
    for chunk in _chunks(sorted(set(npc_ids))):
        marks = ", ".join("?" for _ in chunk)
        for m in _select(db, f"day = ? AND npc_id IN ({marks})", day, *chunk):
            found.setdefault(m.npc_id, []).append(m)
    return found


def remembered_in_order(db: D1Database, npc_id: str) -> list[StoredMemory]:
    """The NPC's memories in the order they were remembered (`seq`, written at remember time)."""
    return _select(db, "npc_id = ?", npc_id, order="seq, id")


# --- state keys (schema migration 8): the newest memory of an NPC under a key is its current state ----------

_KEY_ORDER = "state_key, day, hour, seq, id"  # within a key, oldest first: world time, then remember order


def keyed(db: D1Database, npc_id: str, keys: Sequence[str] | None = None) -> dict[str, list[StoredMemory]]:
    """The NPC's memories under each state key (all its keys when `keys` is None), oldest first by world time
    (remember order among memories of the same hour); keys with no memory are left out."""
    found: dict[str, list[StoredMemory]] = {}
    if keys is None:
        rows = _select(db, "npc_id = ? AND state_key IS NOT NULL", npc_id, order=_KEY_ORDER)
    else:
        rows = []
        for chunk in _chunks(sorted(set(keys))):
            marks = ", ".join("?" for _ in chunk)
            rows += _select(db, f"npc_id = ? AND state_key IN ({marks})", npc_id, *chunk, order=_KEY_ORDER)
    for m in rows:
        found.setdefault(str(m.state_key), []).append(m)
    return found


def semantic_in_order(db: D1Database, npc_id: str, *, keyed: bool = False) -> list[StoredMemory]:
    """The NPC's memories hybrid recall ranks (`SEMANTIC_STATES`) in remember order: after decay has dropped most
    of a long life's memories from the index, a small share of `remembered_in_order`. `keyed`: with every memory
    under a state key too, whatever its state (recall's current state comes from them)."""
    marks = ", ".join("?" for _ in SEMANTIC_STATES)
    where = f"npc_id = ? AND (index_state IN ({marks}){' OR state_key IS NOT NULL' if keyed else ''})"
    return _select(db, where, npc_id, *SEMANTIC_STATES, order="seq, id")


def memories_in_state(db: D1Database, states: Sequence[str]) -> list[StoredMemory]:
    marks = ", ".join("?" for _ in states)
    return _select(db, f"index_state IN ({marks})", *states, forgotten=True)


class DecayRow(NamedTuple):
    """What a decay pass reads of a memory (scoring.plan_decay's input): the few columns it needs, not the text."""

    id: str
    importance: float
    decay_factor: float
    decayed_day: int
    index_state: str


def decaying(db: D1Database, today: int) -> tuple[list[DecayRow], int | None]:
    """The memories a decay pass on `today` changes: not yet decayed today, and below the cap or still indexed.
    A row at the cap (1.0) that is out of the index has nothing left to grow: it keeps the day it got there, so
    a pass reads the memories of the last weeks, not every memory ever kept. Only the columns the pass needs are
    read (the texts would be most of the bytes). With them, in the same statement, how many memories are
    indexed (the pass's cap check starts from it); None when no row came back to carry it."""
    sql = (
        "SELECT id, importance, decay_factor, decayed_day, index_state, (SELECT COUNT(*) FROM short_term_memories"
        " WHERE index_state = 'indexed') AS indexed FROM short_term_memories"
        f" WHERE decayed_day < ? AND (decay_factor < 1.0 OR index_state = 'indexed') AND {_VISIBLE} ORDER BY id"
    )
    found = db.prepare(sql).bind(today).all().results
    rows = [DecayRow(r["id"], r["importance"], r["decay_factor"], r["decayed_day"], r["index_state"])
            for r in found]  # numbers as D1 types them
    return rows, int(found[0]["indexed"]) if found else None


def all_memories(db: D1Database) -> list[StoredMemory]:
    return _select(db, "1 = 1", order="id")


def not_yet_visible(db: D1Database, npc_id: str, since: float, limit: int) -> list[StoredMemory]:
    """Memories the index may not show yet: waiting in the outbox, or upserted within the visibility window."""
    return _select(
        db,
        "npc_id = ? AND (index_state = 'pending' OR (index_state = 'indexed' AND indexed_at >= ?))",
        npc_id,
        since,
        order=f"day DESC, hour DESC, id LIMIT {int(limit)}",
    )


def recent_short_term(db: D1Database, npc_id: str, limit: int) -> list[StoredMemory]:
    return _select(db, "npc_id = ?", npc_id, order=f"day DESC, hour DESC, importance DESC, id LIMIT {int(limit)}")


def kept_in_d1_only(db: D1Database, npc_id: str, since_day: int, limit: int) -> list[StoredMemory]:
    """The NPC's observations never sent to the index (importance at or below the threshold) from `since_day` on,
    newest first."""
    return _select(db, "npc_id = ? AND index_state = 'none' AND kind = 'observation' AND day >= ?", npc_id,
                   since_day, order=f"day DESC, hour DESC, id LIMIT {int(limit)}")


def set_state(
    db: D1Database, ids: Iterable[str], state: str, indexed_at: float | None = None, *, set_unchanged: bool = False
) -> list[D1PreparedStatement]:
    """One UPDATE per chunk of ids (D1 counts every statement; DuckDB pays per statement too). Each chunk first
    bumps the memory revision if a row enters or leaves a set recall caches (see `revisions`), unless the caller
    knows none does (`set_unchanged`)."""
    statements = []
    for chunk in _chunks(sorted(set(ids))):
        marks = ", ".join("?" for _ in chunk)
        if not set_unchanged:
            statements.append(_bump_revision_if_set_changes(db, chunk, state))
        sql = f"UPDATE short_term_memories SET index_state = ?, indexed_at = ? WHERE id IN ({marks})"
        statements.append(db.prepare(sql).bind(state, indexed_at, *chunk))
    return statements


_DECAY_ROWS = 20_000  # one JSON parameter of (id, factor) pairs, well under D1's 2 MB string limit


def set_decay(db: D1Database, factors: dict[str, float], day: int) -> list[D1PreparedStatement]:
    """Per-row factors in one statement per 20,000 rows: the (id, factor) pairs travel as one JSON object and
    `json_each` joins them to the rows (D1's 100-parameter limit would otherwise allow 30 rows a statement).
    JSON carries each float's shortest repr, which parses back to the same value."""
    sql = ("UPDATE short_term_memories SET decay_factor = j.value, decayed_day = ? FROM json_each(?) AS j"
           " WHERE short_term_memories.id = j.key")
    statements = [db.prepare(sql).bind(day, pairs) for pairs in _json_pairs(factors)]
    if statements:  # recollections carry the decay factor: cached rows must be read again
        statements.append(db.prepare("UPDATE sequences SET value = value + 1 WHERE name = ?").bind(REVISION))
    return statements


def set_indexed(db: D1Database, at: dict[str, float]) -> list[D1PreparedStatement]:
    """Rows `indexed`, each at its own time, one statement per 20,000 rows (`set_decay`'s JSON form): what
    `set_state(ids, "indexed", now, set_unchanged=True)` writes, for rows indexed at different times. Only for
    rows that were `pending` (a move that changes no set recall caches)."""
    sql = ("UPDATE short_term_memories SET index_state = 'indexed', indexed_at = j.value FROM json_each(?) AS j"
           " WHERE short_term_memories.id = j.key")
    return [db.prepare(sql).bind(pairs) for pairs in _json_pairs(at)]


def _json_pairs(values: dict[str, float]) -> list[str]:
    """{id: value} as JSON objects of at most `_DECAY_ROWS` pairs each, ids in order (for `json_each`)."""
    items = sorted(values.items())
    return [json.dumps(dict(items[start : start + _DECAY_ROWS])) for start in range(0, len(items), _DECAY_ROWS)]


# --- revisions: what proves a recall cache current --------------------------------------------------------

SEMANTIC_STATES = ("indexed", "pending")  # the memories hybrid recall ranks (semantic_in_order)
REVISION = "memory_revision"  # a sequences row: bumped in the same batch as any write changing cached fields


def bump_revision(db: D1Database) -> D1PreparedStatement:
    return db.prepare("UPDATE sequences SET value = value + 1 WHERE name = ?").bind(REVISION)


NPC_REVISION = "npc_revision"  # a sequences row: bumped in the same batch as any write to a registration


class Proof(NamedTuple):
    """What one read of `sequences` proves: `revision` and `counter` as `revisions` gives them; `npcs` moves
    with every registration written or dropped (None where its row is missing: registrations cannot be cached)."""

    revision: int
    counter: int
    npcs: int | None


def bump_npc_revision(db: D1Database) -> D1PreparedStatement:
    return db.prepare("UPDATE sequences SET value = value + 1 WHERE name = ?").bind(NPC_REVISION)


def ensure_revision(db: D1Database) -> None:
    db.prepare(
        "INSERT INTO sequences (name, value) VALUES (?, 0), (?, 0) ON CONFLICT (name) DO NOTHING"
    ).bind(REVISION, NPC_REVISION).run()


def _bump_revision_if_set_changes(db: D1Database, ids: Sequence[str], state: str) -> D1PreparedStatement:
    """Runs before the state UPDATE in its batch: bumps when a row moves between the sets recall caches keep,
    hybrid's (SEMANTIC_STATES) and keyword's (every state but FORGOTTEN_STATES). pending -> indexed, the common
    case, and forgetting -> forgotten change nothing a recollection shows."""
    marks = ", ".join("?" for _ in ids)
    group = next((g for g in (SEMANTIC_STATES, FORGOTTEN_STATES) if state in g), None)
    # a row leaves the new state's group; for a state in neither group, a row leaves either of them
    test, states = ("NOT IN", group) if group else ("IN", SEMANTIC_STATES + FORGOTTEN_STATES)
    sql = (
        "UPDATE sequences SET value = value + 1 WHERE name = ? AND EXISTS (SELECT 1 FROM short_term_memories"
        f" WHERE id IN ({marks}) AND index_state {test} ({', '.join('?' for _ in states)}))"
    )
    return db.prepare(sql).bind(REVISION, *ids, *states)


def revisions(db: D1Database) -> tuple[int, int] | None:
    """(memory revision, remember counter): while both stand, no memory has entered or left hybrid or keyword
    recall's set, no decay factor or importance has changed, and no memory was remembered; a new remember only
    moves the counter (its rows have a higher `seq`). None where the revision row is missing (a database no
    MemorySystem opened): nothing can be proved."""
    proof = read_proof(db)
    return None if proof is None else (proof.revision, proof.counter)


def read_proof(db: D1Database) -> Proof | None:
    """The memory revision, remember counter and NPC revision in one read (one D1 statement per recall)."""
    rows = db.prepare(f"SELECT name, value, {LAST_SEQ} AS counter FROM sequences WHERE name IN (?, ?)").bind(
        REVISION, NPC_REVISION
    ).all()
    found = {r["name"]: int(r["value"]) for r in rows.results}
    if REVISION not in found:
        return None
    return Proof(found[REVISION], int(rows.results[0]["counter"]), found.get(NPC_REVISION))


def remembered_after(db: D1Database, npc_id: str, seq: int) -> list[StoredMemory]:
    """The NPC's memories remembered after the counter stood at `seq`, in remember order."""
    return _select(db, "npc_id = ? AND seq > ?", npc_id, seq, order="seq, id")


def has_memories(db: D1Database, npc_id: str) -> bool:
    """Whether the NPC has any memory row, forgotten ones too."""
    return bool(db.prepare("SELECT 1 AS x FROM short_term_memories WHERE npc_id = ? LIMIT 1").bind(npc_id).first("x"))


def memory_npc_in_other_case(db: D1Database, npc_id: str) -> str | None:
    """An NPC id with memories equal to `npc_id` but for case, or None."""
    sql = "SELECT DISTINCT npc_id FROM short_term_memories WHERE lower(npc_id) = lower(?) AND npc_id <> ? LIMIT 1"
    value = db.prepare(sql).bind(npc_id, npc_id).first("npc_id")
    return None if value is None else str(value)


def memory_npc_ids(db: D1Database, limit: int = 10_000) -> list[str]:
    """The ids of NPCs with memory rows (at most `limit`): what a misspelt id is compared with."""
    rows = db.prepare("SELECT DISTINCT npc_id FROM short_term_memories LIMIT ?").bind(limit).all().results
    return [str(r["npc_id"]) for r in rows]


def count_memories(db: D1Database, where: str = "1 = 1") -> int:
    return int(db.prepare(f"SELECT COUNT(*) AS n FROM short_term_memories WHERE {where}").first("n") or 0)


# --- outbox ------------------------------------------------------------------------------------------------


def live_outbox(db: D1Database, max_attempts: int) -> list[dict[str, Any]]:
    """Rows still to be tried, earliest first: outbox rows with attempts < max_attempts, and every `pending`
    memory with no outbox row, as never attempted (attempts 0). The writer writes a memory `pending` without an
    outbox row and indexes it at once; the outbox row is made only when an attempt fails. Due among them: those
    whose backoff has passed, and every row never attempted whatever the clock says: it belongs to a process
    that is trying right now (a second upsert of the same vector is harmless) or that died before its attempt,
    whose world time may be ahead of ours (it was never saved)."""
    return db.prepare(
        "SELECT memory_id, attempts, next_attempt_at FROM embedding_outbox WHERE attempts < ?"
        " UNION ALL SELECT id AS memory_id, 0 AS attempts, 0.0 AS next_attempt_at FROM short_term_memories"
        " WHERE index_state = 'pending' AND id NOT IN (SELECT memory_id FROM embedding_outbox)"
        " ORDER BY next_attempt_at, memory_id"
    ).bind(max_attempts).all().results


def pending_size(db: D1Database) -> int:
    """Memories waiting for the index: `pending` in D1 (with an outbox row or, never attempted, without)."""
    return count_memories(db, "index_state = 'pending'")


def exhausted(db: D1Database, max_attempts: int) -> set[str]:
    """`pending` memories whose outbox row has used up its attempts: no retry takes them any more."""
    sql = ("SELECT o.memory_id AS memory_id FROM embedding_outbox o JOIN short_term_memories m ON m.id = o.memory_id"
           " WHERE o.attempts >= ? AND m.index_state = 'pending'")
    return {r["memory_id"] for r in db.prepare(sql).bind(max_attempts).all().results}


def outbox_attempts(db: D1Database, ids: Sequence[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for chunk in _chunks(list(ids)):
        marks = ", ".join("?" for _ in chunk)
        sql = f"SELECT memory_id, attempts FROM embedding_outbox WHERE memory_id IN ({marks})"
        found.update((r["memory_id"], int(r["attempts"])) for r in db.prepare(sql).bind(*chunk).all().results)
    return found


def dequeue(db: D1Database, ids: Iterable[str]) -> list[D1PreparedStatement]:
    return _per_chunk(db, "DELETE FROM embedding_outbox WHERE memory_id IN ({marks})", ids)


def _per_chunk(db: D1Database, sql: str, ids: Iterable[str]) -> list[D1PreparedStatement]:
    """`sql` (its `{marks}` a list of placeholders) once per chunk of the distinct ids, in order."""
    statements = []
    for chunk in _chunks(sorted(set(ids))):
        statements.append(db.prepare(sql.format(marks=", ".join("?" for _ in chunk))).bind(*chunk))
    return statements


def reschedule(db: D1Database, memory_id: str, attempts: int, next_at: float, error: str) -> D1PreparedStatement:
    return db.prepare(
        "UPDATE embedding_outbox SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE memory_id = ?"
    ).bind(attempts, next_at, error[:500], memory_id)


def outbox_size(db: D1Database) -> int:
    return int(db.prepare("SELECT COUNT(*) AS n FROM embedding_outbox").first("n") or 0)


# --- lineage: the memories a summary was made from (schema migration 4) ----------------------------------


def put_sources(db: D1Database, pairs: Sequence[tuple[str, str]]) -> list[D1PreparedStatement]:
    """Lineage rows, (summary id, source id) pairs, 45 a statement."""
    statements = []
    for start in range(0, len(pairs), 45):
        chunk = pairs[start : start + 45]
        rows = ", ".join("(?, ?)" for _ in chunk)
        sql = (f"INSERT INTO memory_sources (summary_id, source_id) VALUES {rows}"
               " ON CONFLICT (summary_id, source_id) DO NOTHING")
        statements.append(db.prepare(sql).bind(*[v for pair in chunk for v in pair]))
    return statements


def _pairs(db: D1Database, column: str, ids: Sequence[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for chunk in _chunks(sorted(set(ids))):
        marks = ", ".join("?" for _ in chunk)
        sql = (f"SELECT summary_id, source_id FROM memory_sources WHERE {column} IN ({marks})"
               " ORDER BY summary_id, source_id")
        found += [(r["summary_id"], r["source_id"]) for r in db.prepare(sql).bind(*chunk).all().results]
    return found


def sources_of(db: D1Database, summary_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """summary id -> the ids of the memories it was made from (summaries without lineage are left out)."""
    out: dict[str, list[str]] = {}
    for summary_id, source_id in _pairs(db, "summary_id", summary_ids):
        out.setdefault(summary_id, []).append(source_id)
    return {k: tuple(v) for k, v in out.items()}


def summaries_of(db: D1Database, source_id: str) -> tuple[str, ...]:
    """The summaries a memory went into."""
    return tuple(summary_id for summary_id, _ in _pairs(db, "source_id", [source_id]))


def record_forgets(
    db: D1Database, memories: Sequence[StoredMemory], reason: str, at: float
) -> list[D1PreparedStatement]:
    """Why each memory was forgotten (the first reason stands when a forget is re-run); 4 parameters a row."""
    statements = []
    for start in range(0, len(memories), 24):
        chunk = memories[start : start + 24]
        rows = ", ".join("(?, ?, ?, ?)" for _ in chunk)
        values = [v for m in chunk for v in (m.id, m.npc_id, reason, at)]
        sql = (f"INSERT INTO forgotten (memory_id, npc_id, reason, forgotten_at) VALUES {rows}"
               " ON CONFLICT (memory_id) DO NOTHING")
        statements.append(db.prepare(sql).bind(*values))
    return statements


def drawing_on(db: D1Database, source_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(summary id, source id) for every summary made from any of the memories."""
    return _pairs(db, "source_id", source_ids)


def recorded_forgets(db: D1Database, ids: Sequence[str]) -> set[str]:
    """The ids among these with a `forgotten` record (forgotten on purpose, not hidden to be re-derived)."""
    found: set[str] = set()
    for chunk in _chunks(sorted(set(ids))):
        marks = ", ".join("?" for _ in chunk)
        sql = f"SELECT memory_id FROM forgotten WHERE memory_id IN ({marks})"
        found |= {str(r["memory_id"]) for r in db.prepare(sql).bind(*chunk).all().results}
    return found


def erase_content(db: D1Database, ids: Sequence[str]) -> list[D1PreparedStatement]:
    """Forgotten (or hidden, to be re-derived) rows keep no text: an export or push of D1 must not carry it."""
    return _per_chunk(db, "UPDATE short_term_memories SET content = '' WHERE id IN ({marks})", ids)


def rewrite_memory(db: D1Database, memory: StoredMemory) -> D1PreparedStatement:
    """A memory's text and what is derived from it (a corrected memory, a re-derived summary)."""
    return db.prepare(
        "UPDATE short_term_memories SET content = ?, importance = ?, type = ?, about = ? WHERE id = ?"
    ).bind(memory.content, memory.importance, memory.type, ",".join(memory.about), memory.id)


def diaries_of(db: D1Database, npc_ids: Sequence[str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for chunk in _chunks(sorted(set(npc_ids))):
        marks = ", ".join("?" for _ in chunk)
        sql = f"SELECT npc_id, day, text FROM diaries WHERE npc_id IN ({marks}) ORDER BY npc_id, day"
        found += db.prepare(sql).bind(*chunk).all().results
    return found


def set_diary_text(db: D1Database, npc_id: str, day: int, text: str) -> D1PreparedStatement:
    return db.prepare("UPDATE diaries SET text = ? WHERE npc_id = ? AND day = ?").bind(text, npc_id, day)


# --- diaries, NPC state, counters, meta, job runs ----------------------------------------------------------


def put_diary(db: D1Database, npc_id: str, day: int, text: str) -> None:
    db.prepare(
        "INSERT INTO diaries (npc_id, day, text) VALUES (?, ?, ?)"
        " ON CONFLICT (npc_id, day) DO UPDATE SET text = excluded.text"
    ).bind(npc_id, day, text).run()


def put_diaries(db: D1Database, day: int, texts: dict[str, str]) -> list[D1PreparedStatement]:
    """`put_diary` for many NPCs, 32 rows a statement."""
    items = sorted(texts.items())
    statements = []
    for start in range(0, len(items), 32):
        chunk = items[start : start + 32]
        rows = ", ".join("(?, ?, ?)" for _ in chunk)
        sql = (f"INSERT INTO diaries (npc_id, day, text) VALUES {rows}"
               " ON CONFLICT (npc_id, day) DO UPDATE SET text = excluded.text")
        statements.append(db.prepare(sql).bind(*[v for npc_id, text in chunk for v in (npc_id, day, text)]))
    return statements


def diaries_to_consolidate(db: D1Database, up_to_day: int) -> list[dict[str, Any]]:
    return db.prepare(
        "SELECT npc_id, day, text FROM diaries WHERE summary_id IS NULL AND day <= ? ORDER BY day, npc_id"
    ).bind(up_to_day).all().results


def mark_consolidated(db: D1Database, links: Sequence[tuple[str, int, str]]) -> list[D1PreparedStatement]:
    """Each (NPC, day)'s diary points to what it was condensed into: per day, 32 NPCs a statement (a CASE maps
    the NPC to its link)."""
    by_day: dict[int, list[tuple[str, str]]] = {}
    for npc_id, day, link in links:
        by_day.setdefault(day, []).append((npc_id, link))
    statements = []
    for day, items in sorted(by_day.items()):
        for start in range(0, len(items), 32):
            chunk = items[start : start + 32]
            cases = " ".join("WHEN ? THEN ?" for _ in chunk)
            marks = ", ".join("?" for _ in chunk)
            sql = f"UPDATE diaries SET summary_id = CASE npc_id {cases} END WHERE day = ? AND npc_id IN ({marks})"
            values = [v for pair in chunk for v in pair] + [day] + [npc_id for npc_id, _ in chunk]
            statements.append(db.prepare(sql).bind(*values))
    return statements


def diary_link(db: D1Database, npc_id: str, day: int) -> str | None:
    """What a consolidated day points to: its summary, or its one memory (a day of one memory is linked)."""
    value = (
        db.prepare("SELECT summary_id FROM diaries WHERE npc_id = ? AND day = ?").bind(npc_id, day).first("summary_id")
    )
    return None if value is None else str(value)


def diary(db: D1Database, npc_id: str, day: int) -> str | None:
    value = db.prepare("SELECT text FROM diaries WHERE npc_id = ? AND day = ?").bind(npc_id, day).first("text")
    return None if value is None else str(value)


_PROFILE = "SELECT npc_id, name, role, description, aliases, traits FROM npc_state"


def npc_profile(db: D1Database, npc_id: str) -> dict[str, Any] | None:
    row = db.prepare(f"{_PROFILE} WHERE npc_id = ?").bind(npc_id).first()
    return dict(row) if row else None


def held_keys(db: D1Database, npc_ids: Sequence[str]) -> dict[str, set[str]]:
    """{npc id: the state keys its visible memories set} for these NPCs (each NPC given, with none or some)."""
    held: dict[str, set[str]] = {npc: set() for npc in npc_ids}
    for chunk in _chunks(list(dict.fromkeys(npc_ids))):
        marks = ", ".join("?" for _ in chunk)
        rows = db.prepare(f"SELECT DISTINCT npc_id, state_key FROM short_term_memories WHERE npc_id IN ({marks})"
                          f" AND state_key IS NOT NULL AND {_VISIBLE}").bind(*chunk).all().results
        for row in rows:
            held[str(row["npc_id"])].add(str(row["state_key"]))
    return held


def npc_profiles(db: D1Database) -> list[dict[str, Any]]:
    return [dict(r) for r in db.prepare(f"{_PROFILE} ORDER BY npc_id").all().results]


def put_npc(db: D1Database, row: dict[str, Any], *, replace: bool) -> D1PreparedStatement:
    """One NPC's row; `replace` overwrites the named fields of an existing row, else an existing row stays."""
    conflict = (
        "DO UPDATE SET name = excluded.name, role = excluded.role, description = excluded.description,"
        " aliases = excluded.aliases, traits = excluded.traits" if replace else "DO NOTHING"
    )
    return db.prepare(
        "INSERT INTO npc_state (npc_id, name, role, description, aliases, traits) VALUES (?, ?, ?, ?, ?, ?)"
        f" ON CONFLICT (npc_id) {conflict}"
    ).bind(row["npc_id"], row["name"], row["role"], row["description"], row["aliases"], row["traits"])


def bump(db: D1Database, name: str, by: int = 1) -> D1PreparedStatement:
    return db.prepare(
        "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = counters.value + ?"
    ).bind(name, by, by)


def counters(db: D1Database) -> dict[str, int]:
    rows = db.prepare("SELECT name, value FROM counters ORDER BY name").all().results
    return {row["name"]: int(row["value"]) for row in rows}


def get_meta(db: D1Database, key: str) -> str | None:
    value = db.prepare("SELECT value FROM meta WHERE key = ?").bind(key).first("value")
    return None if value is None else str(value)


def set_meta(db: D1Database, key: str, value: str) -> None:
    db.prepare(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
    ).bind(key, value).run()


def world_seconds(db: D1Database) -> float:
    """The world time the folder has reached: the latest of the time saved by the last process that stopped
    cleanly (`meta.world_seconds`), the last time a scheduled job ran (`job_runs.ran_at`, written with every
    job run), so a killed `run` or demo resumes from its last job instead of the last clean stop, and the latest
    memory's time (a memory remembered at day 3 means the world has reached day 3, whoever wrote it)."""
    saved = get_meta(db, "world_seconds")
    last_job = db.prepare("SELECT MAX(ran_at) AS t FROM job_runs").first("t")
    last_memory = db.prepare("SELECT MAX(day * 86400 + hour * 3600) AS t FROM short_term_memories").first("t")
    return max(float(t) for t in (saved or 0.0, last_job or 0.0, last_memory or 0.0))


def last_period(db: D1Database, job: str) -> int | None:
    value = db.prepare("SELECT period FROM job_runs WHERE job = ?").bind(job).first("period")
    return None if value is None else int(value)


def last_periods(db: D1Database) -> dict[str, int]:
    """Every job's last period done, in one read."""
    return {r["job"]: int(r["period"]) for r in db.prepare("SELECT job, period FROM job_runs").all().results}


def record_run(db: D1Database, job: str, period: int, ran_at: float) -> None:
    record_runs(db, [(job, period)], ran_at)


def record_runs(db: D1Database, runs: Sequence[tuple[str, int]], ran_at: float) -> None:
    """The (job, period) pairs done at `ran_at`, in one statement (a scheduler's tick runs several jobs)."""
    rows = ", ".join("(?, ?, ?)" for _ in runs)
    db.prepare(
        f"INSERT INTO job_runs (job, period, ran_at) VALUES {rows}"
        " ON CONFLICT (job) DO UPDATE SET period = excluded.period, ran_at = excluded.ran_at"
    ).bind(*[v for job, period in runs for v in (job, period, ran_at)]).run()
