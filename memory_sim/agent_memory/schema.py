"""Agent Memory's own D1 tables, beside the NPC memory's in the same database (plain SQLite that runs on real D1):
namespaces, profiles, sessions, the raw messages, the memories with their type, topic key, session and the memory
that superseded them, and which messages each memory came from. Versioned on their own (`agent_memory_schema`),
so the NPC ledger's migrations (memory/ledger/schema.py) and these never share a number.

Times are ISO 8601 strings in UTC with milliseconds ("2026-04-21T00:00:00.000Z"): they sort as they compare.
"""

from __future__ import annotations

from memory_sim.bindings.d1 import D1Database

MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (
        1,
        "Agent Memory: namespaces, profiles, sessions, messages, memories and their source messages",
        (
            "CREATE TABLE IF NOT EXISTS am_namespaces ("
            " account_id TEXT NOT NULL, name TEXT NOT NULL, id TEXT NOT NULL UNIQUE,"
            " created_at TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (account_id, name))",
            "CREATE TABLE IF NOT EXISTS am_profiles ("
            " namespace_id TEXT NOT NULL, name TEXT NOT NULL, id TEXT NOT NULL UNIQUE, npc_id TEXT NOT NULL,"
            " created_at TEXT NOT NULL, PRIMARY KEY (namespace_id, name))",
            "CREATE TABLE IF NOT EXISTS am_sessions ("
            " profile_id TEXT NOT NULL, session_id TEXT NOT NULL, first_at TEXT NOT NULL, last_at TEXT NOT NULL,"
            " PRIMARY KEY (profile_id, session_id))",
            "CREATE TABLE IF NOT EXISTS am_messages ("
            " id TEXT NOT NULL PRIMARY KEY, profile_id TEXT NOT NULL, session_id TEXT NOT NULL, role TEXT NOT NULL,"
            " content TEXT NOT NULL, created_at TEXT NOT NULL, position INTEGER NOT NULL)",
            "CREATE INDEX IF NOT EXISTS am_messages_session ON am_messages (profile_id, session_id)",
            "CREATE TABLE IF NOT EXISTS am_memories ("
            " id TEXT NOT NULL PRIMARY KEY, profile_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL,"
            " summary TEXT NOT NULL, content TEXT NOT NULL, topic_key TEXT, session_id TEXT,"
            " created_at TEXT NOT NULL, updated_at TEXT NOT NULL, superseded_by TEXT, happened_at TEXT NOT NULL)",
            "CREATE INDEX IF NOT EXISTS am_memories_profile ON am_memories (profile_id, seq)",
            "CREATE INDEX IF NOT EXISTS am_memories_topic ON am_memories (profile_id, topic_key)",
            "CREATE TABLE IF NOT EXISTS am_memory_messages ("
            " memory_id TEXT NOT NULL, message_id TEXT NOT NULL, PRIMARY KEY (memory_id, message_id))",
        ),
    ),
)


def current_version(db: D1Database) -> int:
    db.prepare("CREATE TABLE IF NOT EXISTS agent_memory_schema (version INTEGER NOT NULL PRIMARY KEY,"
               " description TEXT NOT NULL)").run()
    found = db.prepare("SELECT MAX(version) AS v FROM agent_memory_schema").first("v")
    return int(found or 0)


def migrate(db: D1Database) -> int:
    """Applies the migrations not yet applied, each in one batch (one transaction); returns the version."""
    version = current_version(db)
    for number, description, statements in MIGRATIONS:
        if number <= version:
            continue
        record = db.prepare("INSERT INTO agent_memory_schema (version, description) VALUES (?, ?)")
        db.batch([db.prepare(sql) for sql in statements] + [record.bind(number, description)])
        version = number
    return version
