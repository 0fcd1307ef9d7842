"""The parity corpus: every statement runs on sqlite3 (D1's own engine) and on DuckDB; results, types,
`changes` and `last_row_id` agree, both fail, or DuckDB refuses it with a clear D1Unsupported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_sim.errors import D1Error, D1Unsupported
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

CORPUS = [
    line
    for line in (Path(__file__).parent / "corpus.sql").read_text().splitlines()
    if line.strip() and not line.startswith("--")
]

# Refused on DuckDB, each with the word its message must name.
REFUSED = {
    "SELECT random()": "random()",
    "CREATE TRIGGER t_ai AFTER INSERT ON npc_state BEGIN SELECT 1; END": "TRIGGER",
    "CREATE VIRTUAL TABLE docs USING fts5(body)": "VIRTUAL",
    "CREATE TABLE untyped (a, b)": "column type",
    "CREATE TABLE child (id INTEGER PRIMARY KEY, parent TEXT REFERENCES npc_state(npc_id) ON DELETE CASCADE)": "ON DELETE",
    "UPDATE OR IGNORE npc_state SET mood = 'x'": "UPDATE OR",
    "INSERT OR ROLLBACK INTO npc_state (npc_id) VALUES ('z')": "OR ROLLBACK",
    "CREATE INDEX idx_partial ON short_term_memories(day) WHERE importance > 0.5": "partial indexes",
    "SELECT npc_id, count(*) FROM short_term_memories": "add npc_id to GROUP BY",
    "SELECT npc_id, content, count(*) FROM short_term_memories GROUP BY npc_id": "bare column content",
    "SELECT max(importance), content FROM short_term_memories": "max(content)",
    # DuckDB's rowid is a physical position that changes on UPDATE: only an INTEGER PRIMARY KEY is a stable one.
    "SELECT rowid, id FROM short_term_memories ORDER BY rowid": "no INTEGER PRIMARY KEY",
    "SELECT id FROM short_term_memories WHERE rowid = 1": "no INTEGER PRIMARY KEY",
    "SELECT s.id FROM short_term_memories s JOIN diaries d ON d.npc_id = s.npc_id ORDER BY s.rowid": "INTEGER PRIMARY KEY",
}
# DuckDB is stricter than SQLite's legacy quirks: these fail there with the named cause (see docs/d1.md).
STRICTER: dict[str, str] = {}
# Tables whose rowid is an INTEGER PRIMARY KEY column: last_row_id is compared after inserts into them.
# (Elsewhere the DuckDB engine keeps the previous last_row_id; see docs/d1.md.)
ROWID_TABLES = ("diaries", "world_events", "events_log", "copies")


def _run(db: Any, sql: str) -> tuple[str, Any]:
    try:
        result = db.prepare(sql).all()
    except D1Unsupported as exc:
        return "refused", str(exc)
    except D1Error as exc:
        return "error", str(exc)
    return "ok", result


@pytest.fixture(scope="module")
def outcomes() -> list[tuple[tuple[str, Any], tuple[str, Any]]]:
    reference, duck = SqliteDatabase(), DuckDBDatabase()
    pairs = [(_run(reference, sql), _run(duck, sql)) for sql in CORPUS]
    reference.close()
    duck.close()
    return pairs


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 150
    assert set(REFUSED) <= set(CORPUS) and set(STRICTER) <= set(CORPUS)


def _rows(sql: str, rows: list[dict[str, Any]]) -> list[Any]:
    # Floats to 9 places: DuckDB sums doubles with compensation, SQLite naively (4.85 vs 4.8500000000000005).
    items = [tuple((k, round(v, 9) if isinstance(v, float) else v) for k, v in row.items()) for row in rows]
    return items if "ORDER BY" in sql.upper() else sorted(items, key=repr)


@pytest.mark.parametrize("index", range(len(CORPUS)), ids=lambda i: f"{i + 1}")
def test_statement_agrees(index: int, outcomes: list[tuple[tuple[str, Any], tuple[str, Any]]]) -> None:
    sql = CORPUS[index]
    (ref_kind, ref), (duck_kind, duck) = outcomes[index]
    if sql in REFUSED:
        assert duck_kind == "refused", (sql, duck)
        assert REFUSED[sql] in duck and duck.startswith("D1_ERROR: ")
        return
    if sql in STRICTER:
        assert duck_kind == "error" and STRICTER[sql] in duck, (sql, duck)
        return
    assert duck_kind == ref_kind, (sql, ref, duck)
    if ref_kind == "error":
        assert duck.startswith("D1_ERROR: ")
        return
    assert _rows(sql, duck.results) == _rows(sql, ref.results), sql
    for want, got in zip(_rows(sql, ref.results), _rows(sql, duck.results)):
        assert [type(v) for _, v in got] == [type(v) for _, v in want] or _numbers_only(want, got), (sql, want, got)
    assert duck.meta.changes == ref.meta.changes, sql
    words = sql.upper().split()
    if words[0] in ("INSERT", "REPLACE") and any(t.upper() in words for t in ROWID_TABLES) or "LAST_INSERT_ROWID" in sql.upper():
        assert duck.meta.last_row_id == ref.meta.last_row_id, sql


def _numbers_only(want: tuple[Any, ...], got: tuple[Any, ...]) -> bool:
    """A REAL column holding a whole number: SQLite may answer 5 where DuckDB's DOUBLE answers 5.0."""
    return all(type(a) is type(b) or (isinstance(a, (int, float)) and isinstance(b, (int, float))) for (_, a), (_, b) in zip(want, got))
