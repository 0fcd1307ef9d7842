"""The D1 schema as versioned migrations, in plain SQLite that runs unchanged on real D1 (and on DuckDB's
SQLite layer): text ids given by the caller (no AUTOINCREMENT, no rowid ids), no date functions, no
REPLACE INTO, ON CONFLICT for upserts, one statement per string.

D1 is the ledger and the source of truth; the vector index holds semantic memories only and can always be
rebuilt from `short_term_memories` (`memory-sim reembed`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memory_sim.bindings.d1 import D1Database, D1PreparedStatement
from memory_sim.memory.beliefs.keys import infer_key
from memory_sim.memory.beliefs.subjects import key_subjects

MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (
        1,
        "memories, diaries, NPC state, world events, the embedding outbox",
        (
            "CREATE TABLE IF NOT EXISTS short_term_memories ("
            " id TEXT NOT NULL PRIMARY KEY, npc_id TEXT NOT NULL, content TEXT NOT NULL,"
            " importance REAL NOT NULL, day INTEGER NOT NULL, hour INTEGER NOT NULL, type TEXT NOT NULL,"
            " about TEXT NOT NULL DEFAULT '', kind TEXT NOT NULL DEFAULT 'observation',"
            " decay_factor REAL NOT NULL, decayed_day INTEGER NOT NULL,"
            " index_state TEXT NOT NULL DEFAULT 'none', indexed_at REAL)",
            "CREATE INDEX IF NOT EXISTS short_term_memories_npc_day ON short_term_memories (npc_id, day)",
            "CREATE TABLE IF NOT EXISTS diaries ("
            " npc_id TEXT NOT NULL, day INTEGER NOT NULL, text TEXT NOT NULL, summary_id TEXT,"
            " PRIMARY KEY (npc_id, day))",
            "CREATE TABLE IF NOT EXISTS npc_state ("
            " npc_id TEXT NOT NULL PRIMARY KEY, name TEXT NOT NULL, role TEXT NOT NULL DEFAULT '',"
            " description TEXT NOT NULL DEFAULT '', place TEXT NOT NULL DEFAULT '',"
            " updated_day INTEGER NOT NULL DEFAULT 0)",
            "CREATE TABLE IF NOT EXISTS relationships ("
            " npc_id TEXT NOT NULL, other_id TEXT NOT NULL, affinity REAL NOT NULL, updated_day INTEGER NOT NULL,"
            " PRIMARY KEY (npc_id, other_id))",
            "CREATE TABLE IF NOT EXISTS world_events ("
            " id TEXT NOT NULL PRIMARY KEY, day INTEGER NOT NULL, hour INTEGER NOT NULL, place TEXT NOT NULL,"
            " text TEXT NOT NULL, importance REAL NOT NULL)",
            "CREATE TABLE IF NOT EXISTS embedding_outbox ("
            " memory_id TEXT NOT NULL PRIMARY KEY, attempts INTEGER NOT NULL DEFAULT 0,"
            " next_attempt_at REAL NOT NULL, last_error TEXT NOT NULL DEFAULT '')",
        ),
    ),
    (
        2,
        "job bookkeeping (runs survive restarts without running twice), counters, world clock",
        (
            "CREATE TABLE IF NOT EXISTS job_runs ("
            " job TEXT NOT NULL PRIMARY KEY, period INTEGER NOT NULL, ran_at REAL NOT NULL)",
            "CREATE TABLE IF NOT EXISTS counters (name TEXT NOT NULL PRIMARY KEY, value INTEGER NOT NULL)",
            "CREATE TABLE IF NOT EXISTS meta (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL)",
        ),
    ),
    (
        3,
        "remember order: short_term_memories.seq from a per-database counter (sequences)",
        (
            "ALTER TABLE short_term_memories ADD COLUMN seq INTEGER",
            "CREATE TABLE IF NOT EXISTS sequences (name TEXT NOT NULL PRIMARY KEY, value INTEGER NOT NULL)",
            "CREATE INDEX IF NOT EXISTS short_term_memories_npc_seq ON short_term_memories (npc_id, seq)",
        ),
    ),
    (
        4,
        "lineage: the memories each consolidated summary was made from (memory_sources)",
        (
            "CREATE TABLE IF NOT EXISTS memory_sources ("
            " summary_id TEXT NOT NULL, source_id TEXT NOT NULL, PRIMARY KEY (summary_id, source_id))",
            "CREATE INDEX IF NOT EXISTS memory_sources_source ON memory_sources (source_id)",
        ),
    ),
    (
        5,
        "registered NPCs' aliases and traits (npc_state); deliberate forgets and their reasons (forgotten)",
        (
            # nullable: DuckDB's SQLite layer refuses ADD COLUMN ... NOT NULL (readers treat NULL as '')
            "ALTER TABLE npc_state ADD COLUMN aliases TEXT DEFAULT ''",
            "ALTER TABLE npc_state ADD COLUMN traits TEXT DEFAULT ''",
            "CREATE TABLE IF NOT EXISTS forgotten ("
            " memory_id TEXT NOT NULL PRIMARY KEY, npc_id TEXT NOT NULL, reason TEXT NOT NULL,"
            " forgotten_at REAL NOT NULL)",
        ),
    ),
    (
        6,
        "affinity over time: relationship_history, a row where a pair's affinity changed that day",
        (
            "CREATE TABLE IF NOT EXISTS relationship_history ("
            " npc_id TEXT NOT NULL, other_id TEXT NOT NULL, day INTEGER NOT NULL, affinity REAL NOT NULL,"
            " PRIMARY KEY (npc_id, other_id, day))",
        ),
    ),
    (
        7,
        "last access: short_term_memories.recalled_hour, the game hour weighted recall last returned a memory",
        ("ALTER TABLE short_term_memories ADD COLUMN recalled_hour INTEGER",),  # NULL: never recalled
    ),
    (
        8,
        "state keys: the piece of state each memory sets, how sure that is and who said so (game or inferred)",
        (
            "ALTER TABLE short_term_memories ADD COLUMN state_key TEXT",  # NULL: the memory sets no known state
            "ALTER TABLE short_term_memories ADD COLUMN key_confidence REAL",
            "ALTER TABLE short_term_memories ADD COLUMN key_source TEXT",  # 'game' or 'inferred'
            "CREATE INDEX IF NOT EXISTS short_term_memories_npc_key"
            " ON short_term_memories (npc_id, state_key, day, hour, seq)",
        ),
    ),
    (
        9,
        "state values: the value the game gave a memory's state ('warm', 'cold'), so restatements tell as one",
        ("ALTER TABLE short_term_memories ADD COLUMN state_value TEXT",),  # NULL: not known
    ),
    (
        10,
        "remember order without a second statement: the highest seq is the counter (an index finds it)",
        ("CREATE INDEX IF NOT EXISTS short_term_memories_seq ON short_term_memories (seq)",),
    ),
)
MEMORY_SEQUENCE = "memories"  # the sequences row seq was numbered from before migration 10 (now a floor)

SCHEMA_VERSION = MIGRATIONS[-1][0]
TABLES = (
    "short_term_memories",
    "diaries",
    "npc_state",
    "relationships",
    "world_events",
    "embedding_outbox",
    "job_runs",
    "counters",
    "meta",
    "sequences",
    "memory_sources",
    "forgotten",
    "relationship_history",
    "schema_version",
)


def current_version(db: D1Database) -> int:
    db.prepare(
        "CREATE TABLE IF NOT EXISTS schema_version ("
        " version INTEGER NOT NULL PRIMARY KEY, description TEXT NOT NULL, applied_at REAL NOT NULL)"
    ).run()
    value = db.prepare("SELECT MAX(version) AS v FROM schema_version").first("v")
    return int(value or 0)


def migrate(db: D1Database, applied_at: float = 0.0) -> int:
    """Applies the migrations not yet applied, each in one batch (one transaction); returns the version."""
    version = current_version(db)
    for number, description, statements in MIGRATIONS:
        if number <= version:
            continue
        record = db.prepare("INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)")
        backfill = BACKFILLS[number](db) if number in BACKFILLS else []
        db.batch([db.prepare(sql) for sql in statements] + backfill + [record.bind(number, description, applied_at)])
        version = number
    return version


# --- backfills: statements computed from the rows before a migration, run in the migration's own batch -------

_DIGITS = re.compile(r"(\d+)")


def natural_key(memory_id: str) -> tuple[tuple[int, int | str], ...]:
    """Digit runs compare as numbers, so `D1:2` comes before `D1:10` (turn order in LoCoMo-style ids)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(memory_id) if part)


def _number_existing_memories(db: D1Database) -> list[D1PreparedStatement]:
    """Migration 3: rows remembered before `seq` existed are numbered in the order recall used then (day, hour,
    id with digit runs as numbers), 30 rows a statement; the counter starts after them."""
    rows = db.prepare("SELECT id, day, hour FROM short_term_memories").all().results
    ordered = sorted(rows, key=lambda r: (int(r["day"]), int(r["hour"]), natural_key(str(r["id"]))))
    statements = []
    for start in range(0, len(ordered), 30):
        chunk = [(str(r["id"]), start + i + 1) for i, r in enumerate(ordered[start : start + 30])]
        cases = " ".join("WHEN ? THEN ?" for _ in chunk)
        marks = ", ".join("?" for _ in chunk)
        sql = f"UPDATE short_term_memories SET seq = CASE id {cases} ELSE seq END WHERE id IN ({marks})"
        statements.append(db.prepare(sql).bind(*[v for pair in chunk for v in pair], *[i for i, _ in chunk]))
    start_at = db.prepare("INSERT INTO sequences (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING")
    return statements + [start_at.bind(MEMORY_SEQUENCE, len(ordered))]


def _key_existing_memories(db: D1Database) -> list[D1PreparedStatement]:
    """Migration 8: observations remembered before state keys existed get the key `infer_key` gives them now, by
    structure alone (no embedder is at hand while a folder opens), 12 rows a statement; those it names no key
    for keep NULL."""
    profiles = db.prepare("SELECT npc_id, name, role, aliases FROM npc_state").all().results
    rows = db.prepare("SELECT id, npc_id, content, type, about FROM short_term_memories WHERE kind = 'observation'"
                      " AND content <> ''").all().results
    keyed = []
    for r in rows:
        about = tuple(a for a in str(r["about"] or "").split(",") if a)
        subjects = key_subjects(str(r["npc_id"]), about, str(r["content"]), profiles)
        guess = infer_key(str(r["content"]), type=str(r["type"]), subjects=subjects)
        if guess.key is not None:
            keyed.append((str(r["id"]), guess.key, guess.confidence))
    statements = []
    for start in range(0, len(keyed), 12):
        chunk = keyed[start : start + 12]
        cases = " ".join("WHEN ? THEN ?" for _ in chunk)
        marks = ", ".join("?" for _ in chunk)
        sql = (f"UPDATE short_term_memories SET state_key = CASE id {cases} ELSE state_key END,"
               f" key_confidence = CASE id {cases} ELSE key_confidence END, key_source = 'inferred'"
               f" WHERE id IN ({marks})")
        values = [v for i, key, _ in chunk for v in (i, key)] + [v for i, _, c in chunk for v in (i, c)]
        statements.append(db.prepare(sql).bind(*values, *[i for i, _, _ in chunk]))
    return statements


BACKFILLS: dict[int, Callable[[D1Database], list[D1PreparedStatement]]] = {
    3: _number_existing_memories, 8: _key_existing_memories,
}
