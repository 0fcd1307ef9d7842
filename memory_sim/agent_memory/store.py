"""The SQL of Agent Memory's own tables (schema.py), one function a question; rows come back as dicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_sim.bindings.d1 import D1Database, D1PreparedStatement

Row = dict[str, Any]


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


# --- namespaces and profiles ---------------------------------------------------------------------------------------


def namespace(db: D1Database, account_id: str, name: str) -> Row | None:
    row = db.prepare("SELECT * FROM am_namespaces WHERE account_id = ? AND name = ?").bind(account_id, name).first()
    return dict(row) if row else None


def namespaces(db: D1Database, account_id: str, after: str, limit: int) -> list[Row]:
    return [dict(r) for r in db.prepare(
        "SELECT * FROM am_namespaces WHERE account_id = ? AND name > ? ORDER BY name LIMIT ?"
    ).bind(account_id, after, limit).all().results]


def insert_namespace(db: D1Database, account_id: str, name: str, id: str, at: str) -> None:
    db.prepare("INSERT INTO am_namespaces (account_id, name, id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)"
               ).bind(account_id, name, id, at, at).run()


def delete_namespace(db: D1Database, namespace_id: str) -> None:
    db.prepare("DELETE FROM am_namespaces WHERE id = ?").bind(namespace_id).run()


def profile(db: D1Database, namespace_id: str, name: str) -> Row | None:
    row = db.prepare("SELECT * FROM am_profiles WHERE namespace_id = ? AND name = ?").bind(namespace_id, name).first()
    return dict(row) if row else None


def profiles(db: D1Database, namespace_id: str) -> list[Row]:
    return [dict(r) for r in db.prepare("SELECT * FROM am_profiles WHERE namespace_id = ?").bind(namespace_id)
            .all().results]


def insert_profile(db: D1Database, namespace_id: str, name: str, id: str, npc_id: str, at: str) -> None:
    db.prepare("INSERT INTO am_profiles (namespace_id, name, id, npc_id, created_at) VALUES (?, ?, ?, ?, ?)"
               " ON CONFLICT (namespace_id, name) DO NOTHING").bind(namespace_id, name, id, npc_id, at).run()


def delete_profile(db: D1Database, profile_id: str) -> None:
    statements = [db.prepare(sql).bind(profile_id) for sql in (
        "DELETE FROM am_memory_messages WHERE memory_id IN (SELECT id FROM am_memories WHERE profile_id = ?)",
        "DELETE FROM am_memories WHERE profile_id = ?",
        "DELETE FROM am_messages WHERE profile_id = ?",
        "DELETE FROM am_sessions WHERE profile_id = ?",
        "DELETE FROM am_profiles WHERE id = ?",
    )]
    db.batch(statements)


# --- messages and sessions -----------------------------------------------------------------------------------------


def existing_messages(db: D1Database, ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(ids), 50):
        chunk = list(ids[start : start + 50])
        found |= {str(r["id"]) for r in db.prepare(f"SELECT id FROM am_messages WHERE id IN ({_marks(chunk)})")
                  .bind(*chunk).all().results}
    return found


def insert_message(db: D1Database, row: Row) -> D1PreparedStatement:
    return db.prepare(
        "INSERT INTO am_messages (id, profile_id, session_id, role, content, created_at, position)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"
    ).bind(row["id"], row["profile_id"], row["session_id"], row["role"], row["content"], row["created_at"],
           row["position"])


def touch_session(db: D1Database, profile_id: str, session_id: str, first: str, last: str) -> D1PreparedStatement:
    return db.prepare(
        "INSERT INTO am_sessions (profile_id, session_id, first_at, last_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (profile_id, session_id) DO UPDATE SET"
        " first_at = MIN(first_at, excluded.first_at), last_at = MAX(last_at, excluded.last_at)"
    ).bind(profile_id, session_id, first, last)


def latest_session(db: D1Database, profile_id: str) -> str | None:
    row = db.prepare("SELECT session_id FROM am_sessions WHERE profile_id = ? ORDER BY last_at DESC, session_id DESC"
                     " LIMIT 1").bind(profile_id).first()
    return None if row is None else str(row["session_id"])


# --- memories ------------------------------------------------------------------------------------------------------


def memory(db: D1Database, profile_id: str, memory_id: str) -> Row | None:
    row = db.prepare("SELECT * FROM am_memories WHERE profile_id = ? AND id = ?").bind(profile_id, memory_id).first()
    return dict(row) if row else None


def memories_by_id(db: D1Database, profile_id: str, ids: Sequence[str]) -> dict[str, Row]:
    found: dict[str, Row] = {}
    for start in range(0, len(ids), 50):
        chunk = list(ids[start : start + 50])
        for r in db.prepare(f"SELECT * FROM am_memories WHERE profile_id = ? AND id IN ({_marks(chunk)})"
                            ).bind(profile_id, *chunk).all().results:
            found[str(r["id"])] = dict(r)
    return found


def all_memories(db: D1Database, profile_id: str) -> list[Row]:
    return [dict(r) for r in db.prepare("SELECT * FROM am_memories WHERE profile_id = ? ORDER BY seq")
            .bind(profile_id).all().results]


def events_between(db: D1Database, profile_id: str, start: str, end: str) -> list[Row]:
    return [dict(r) for r in db.prepare(
        "SELECT * FROM am_memories WHERE profile_id = ? AND type = 'event' AND happened_at >= ? AND happened_at < ?"
        " AND superseded_by IS NULL ORDER BY happened_at DESC LIMIT 100"
    ).bind(profile_id, start, end).all().results]


def page(db: D1Database, profile_id: str, before_seq: int, limit: int, session_id: str | None,
         type: str | None) -> list[Row]:
    sql = "SELECT * FROM am_memories WHERE profile_id = ? AND seq < ?"
    values: list[Any] = [profile_id, before_seq]
    if session_id is not None:
        sql, values = sql + " AND session_id = ?", [*values, session_id]
    if type is not None:
        sql, values = sql + " AND type = ?", [*values, type]
    return [dict(r) for r in db.prepare(sql + " ORDER BY seq DESC LIMIT ?").bind(*values, limit).all().results]


def next_seq(db: D1Database, profile_id: str) -> int:
    return int(db.prepare("SELECT COALESCE(MAX(seq), 0) AS s FROM am_memories WHERE profile_id = ?")
               .bind(profile_id).first("s")) + 1


def live_with_topic(db: D1Database, profile_id: str, type: str, topic_key: str) -> list[Row]:
    return [dict(r) for r in db.prepare(
        "SELECT * FROM am_memories WHERE profile_id = ? AND type = ? AND topic_key = ? AND superseded_by IS NULL"
    ).bind(profile_id, type, topic_key).all().results]


def insert_memory(db: D1Database, row: Row) -> D1PreparedStatement:
    return db.prepare(
        "INSERT INTO am_memories (id, profile_id, seq, type, summary, content, topic_key, session_id, created_at,"
        " updated_at, superseded_by, happened_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (id) DO NOTHING"
    ).bind(row["id"], row["profile_id"], row["seq"], row["type"], row["summary"], row["content"], row["topic_key"],
           row["session_id"], row["created_at"], row["updated_at"], row["superseded_by"], row["happened_at"])


def supersede(db: D1Database, memory_id: str, by: str, at: str) -> D1PreparedStatement:
    return db.prepare("UPDATE am_memories SET superseded_by = ?, updated_at = ? WHERE id = ?").bind(by, at, memory_id)


def link(db: D1Database, memory_id: str, message_id: str) -> D1PreparedStatement:
    return db.prepare("INSERT INTO am_memory_messages (memory_id, message_id) VALUES (?, ?)"
                      " ON CONFLICT (memory_id, message_id) DO NOTHING").bind(memory_id, message_id)


def source_messages(db: D1Database, memory_id: str) -> list[str]:
    return [str(r["message_id"]) for r in db.prepare("SELECT message_id FROM am_memory_messages WHERE memory_id = ?")
            .bind(memory_id).all().results]


def session_memories(db: D1Database, profile_id: str, session_id: str) -> list[str]:
    return [str(r["id"]) for r in db.prepare("SELECT id FROM am_memories WHERE profile_id = ? AND session_id = ?")
            .bind(profile_id, session_id).all().results]


def delete_memories(db: D1Database, profile_id: str, ids: Sequence[str], message_ids: Sequence[str],
                    session_id: str | None = None) -> None:
    """The memories, the messages named, every link to either, and (with `session_id`) the session's messages and
    row; a memory one of them had superseded surfaces again."""
    statements: list[D1PreparedStatement] = []
    for start in range(0, len(ids), 50):
        chunk = list(ids[start : start + 50])
        marks = _marks(chunk)
        statements += [
            db.prepare(f"UPDATE am_memories SET superseded_by = NULL WHERE superseded_by IN ({marks})").bind(*chunk),
            db.prepare(f"DELETE FROM am_memory_messages WHERE memory_id IN ({marks})").bind(*chunk),
            db.prepare(f"DELETE FROM am_memories WHERE profile_id = ? AND id IN ({marks})").bind(profile_id, *chunk),
        ]
    for start in range(0, len(message_ids), 50):
        chunk = list(message_ids[start : start + 50])
        marks = _marks(chunk)
        statements += [
            db.prepare(f"DELETE FROM am_memory_messages WHERE message_id IN ({marks})").bind(*chunk),
            db.prepare(f"DELETE FROM am_messages WHERE profile_id = ? AND id IN ({marks})").bind(profile_id, *chunk),
        ]
    if session_id is not None:
        statements += [
            db.prepare("DELETE FROM am_messages WHERE profile_id = ? AND session_id = ?").bind(profile_id, session_id),
            db.prepare("DELETE FROM am_sessions WHERE profile_id = ? AND session_id = ?").bind(profile_id, session_id),
        ]
    if statements:
        db.batch(statements)


def message_count(db: D1Database, profile_id: str) -> int:
    return int(db.prepare("SELECT COUNT(*) AS n FROM am_messages WHERE profile_id = ?").bind(profile_id).first("n"))
