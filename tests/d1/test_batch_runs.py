"""Runs of one INSERT in a batch (executed as one DuckDB statement): per-statement meta, ids, types and
all-or-nothing agree with sqlite3, statement by statement."""

from __future__ import annotations

from typing import Any

import pytest

from memory_sim.errors import D1Error
from memory_sim.local.d1.bulk import bulk_insert
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

SCHEMA = [
    "CREATE TABLE notes (id TEXT PRIMARY KEY, npc TEXT NOT NULL, body TEXT, weight REAL, day INTEGER, raw BLOB)",
    "CREATE TABLE diary (id INTEGER PRIMARY KEY AUTOINCREMENT, npc TEXT, day INTEGER, UNIQUE(npc, day))",
    "CREATE TABLE plain_ids (id INTEGER PRIMARY KEY, label TEXT DEFAULT 'none')",
]


def _both() -> list[Any]:
    dbs = [SqliteDatabase(), DuckDBDatabase()]
    for db in dbs:
        for sql in SCHEMA:
            db.prepare(sql).run()
    return dbs


def _meta(results: list[Any]) -> list[tuple[int, int]]:
    return [(r.meta.changes, r.meta.last_row_id) for r in results]


def test_a_run_of_inserts_into_a_rowid_table_gives_each_statement_its_id() -> None:
    ref, duck = _both()
    for db in (ref, duck):
        db.prepare("INSERT INTO diary (id, npc, day) VALUES (40, 'ada', 0)").run()
        db.prepare("DELETE FROM diary WHERE id = 40").run()  # AUTOINCREMENT: 40 is never reused
    insert = "INSERT INTO diary (npc, day) VALUES (?, ?)"
    got = [db.batch([db.prepare(insert).bind("tom", d) for d in range(1, 6)]) for db in (ref, duck)]
    assert _meta(got[1]) == _meta(got[0]) == [(1, 41 + i) for i in range(5)]
    rows = [db.prepare("SELECT id, npc, day FROM diary ORDER BY id").all().results for db in (ref, duck)]
    assert rows[1] == rows[0]
    assert duck.prepare("SELECT last_insert_rowid() AS id").first("id") == 45


def test_a_run_keeps_types_nulls_blobs_and_defaults() -> None:
    ref, duck = _both()
    insert = "INSERT INTO notes (id, npc, body, weight, day, raw) VALUES (?, ?, ?, ?, ?, ?)"
    values = [("a", "ada", "x", 0.5, 1, b"\x00\x01"), ("b", "tom", None, None, None, None), ("c", "é", "ü", 2.0, 3, b"")]
    for db in (ref, duck):
        db.batch([db.prepare(insert).bind(*v) for v in values])
        db.batch([db.prepare("INSERT INTO plain_ids (label) VALUES (?)").bind(x) for x in ("p", "q")])
    for sql in ("SELECT * FROM notes ORDER BY id", "SELECT * FROM plain_ids ORDER BY id"):
        assert duck.prepare(sql).all().results == ref.prepare(sql).all().results


def test_mixed_python_types_in_one_column_still_agree() -> None:
    ref, duck = _both()
    insert = "INSERT INTO notes (id, npc, weight) VALUES (?, ?, ?)"
    for db in (ref, duck):
        results = db.batch([db.prepare(insert).bind(f"m{i}", "ada", w) for i, w in enumerate([1, 2.5, 3])])
        assert [r.meta.changes for r in results] == [1, 1, 1]
    sql = "SELECT id, weight FROM notes ORDER BY id"
    assert duck.prepare(sql).all().results == ref.prepare(sql).all().results


def test_a_failing_row_in_a_run_rolls_the_whole_batch_back() -> None:
    for db in _both():
        first = db.prepare("INSERT INTO plain_ids (label) VALUES ('kept out')")
        insert = db.prepare("INSERT INTO notes (id, npc) VALUES (?, ?)")
        with pytest.raises(D1Error):
            db.batch([first, insert.bind("a", "ada"), insert.bind("b", None), insert.bind("c", "tom")])
        assert db.prepare("SELECT count(*) AS n FROM notes").first("n") == 0
        assert db.prepare("SELECT count(*) AS n FROM plain_ids").first("n") == 0
        with pytest.raises(D1Error):  # duplicate keys inside one run
            db.batch([insert.bind("a", "ada"), insert.bind("a", "tom")])
        assert db.prepare("SELECT count(*) AS n FROM notes").first("n") == 0


def test_only_plain_single_row_inserts_are_merged() -> None:
    duck = DuckDBDatabase()
    for sql in SCHEMA:
        duck.prepare(sql).run()
    schema = duck._engine._schema  # type: ignore[attr-defined]
    for sql in (
        "INSERT INTO notes (id, npc) VALUES (?, 'x')",
        "INSERT INTO diary (id, npc, day) VALUES (?, ?, ?)",  # a listed rowid: given, or max+1 upward for NULL
        "INSERT INTO notes VALUES (?, ?, ?, ?, ?, ?)",  # no column list: every column
        'INSERT INTO "notes" ("id", [npc]) VALUES (?, ?), (?, ?)',  # several rows, quoted names
    ):
        assert bulk_insert(sql, schema) is not None, sql
    for sql in (
        "INSERT INTO notes (id, npc) VALUES (?, lower(?))",  # an expression: evaluated per statement
        "INSERT INTO notes (id, npc) VALUES (?, (SELECT max(npc) FROM notes))",
        "INSERT OR IGNORE INTO notes (id, npc) VALUES (?, ?)",
        "INSERT INTO notes (id, npc) VALUES (?, ?) ON CONFLICT(id) DO NOTHING",
        "INSERT INTO notes (id, npc) VALUES (?, ?) RETURNING id",
        "INSERT INTO notes (id, npc) VALUES ('a', 'b')",
        "INSERT INTO notes (id, npc) VALUES (?, NULL)",  # NULL in a NOT NULL column: fails on every row
        "INSERT INTO notes (id, body) VALUES (?, ?)",  # no npc (NOT NULL, no default): likewise
        "INSERT INTO diary (npc, day) VALUES ('x', ?)",  # a unique key partly literal
        "INSERT INTO diary (id, npc) VALUES (?, ?)",  # a unique key partly by default (day NULL: no clash)
        "INSERT INTO notes (id, npc) VALUES (?, ?), (?, 'x')",  # several rows: bare ? only
    ):
        assert bulk_insert(sql, schema) is None, sql


def test_large_reads_come_back_identical_to_row_by_row_fetching() -> None:
    ref, duck = _both()
    insert = "INSERT INTO notes (id, npc, body, weight, day) VALUES (?, ?, ?, ?, ?)"
    data = [(f"m{i:04}", f"npc{i % 3}", None if i % 7 == 0 else f"t{i}", i / 8, None if i % 5 == 0 else i) for i in range(500)]
    for db in (ref, duck):
        db.batch([db.prepare(insert).bind(*row) for row in data])
    sql = "SELECT id, body, weight, day, day * 2 AS twice FROM notes WHERE npc = ? ORDER BY id"
    want, got = (db.prepare(sql).bind("npc1").all() for db in (ref, duck))
    assert got.results == want.results and got.meta.rows_read == want.meta.rows_read == 167
    assert duck.prepare(sql).bind("npc1").raw(column_names=True) == ref.prepare(sql).bind("npc1").raw(column_names=True)


def test_ids_after_rollbacks_deletes_and_replaces_follow_sqlite() -> None:
    """The engine remembers each table's highest rowid between INSERTs; whatever may lower it must not leave it stale."""
    ref, duck = _both()
    insert = "INSERT INTO plain_ids (label) VALUES (?)"
    ids = []
    for db in (ref, duck):
        db.batch([db.prepare(insert).bind(x) for x in "abc"])
        with pytest.raises(D1Error):
            db.batch([db.prepare(insert).bind("d"), db.prepare("INSERT INTO plain_ids (id) VALUES (1)")])
        got = [db.prepare(insert).bind("e").run().meta.last_row_id]
        db.prepare("DELETE FROM plain_ids WHERE id >= 3").run()
        got.append(db.prepare(insert).bind("f").run().meta.last_row_id)
        db.prepare("REPLACE INTO plain_ids (id, label) VALUES (1, 'g')").run()
        db.prepare("UPDATE plain_ids SET id = 10 WHERE id = 3").run()
        got.append(db.prepare(insert).bind("h").run().meta.last_row_id)
        db.prepare("INSERT INTO plain_ids (id, label) VALUES (50, 'i') ON CONFLICT(id) DO UPDATE SET id = 60").run()
        db.prepare("DELETE FROM plain_ids WHERE id = 50").run()
        got.append(db.prepare(insert).bind("j").run().meta.last_row_id)
        ids.append(got)
    assert ids[1] == ids[0] == [4, 3, 11, 12]
