"""SQLite's rowid on both engines: stable through UPDATEs and the INTEGER PRIMARY KEY where there is one; on
DuckDB a rowid of a table without one is refused (its row numbers move on UPDATE), never run with that meaning."""

from __future__ import annotations

import pytest

from memory_sim.errors import D1Error, D1Unsupported
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

ENGINES = {"sqlite": SqliteDatabase, "duckdb": DuckDBDatabase}


@pytest.fixture(params=sorted(ENGINES))
def db(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    database = ENGINES[request.param]()
    database.exec("CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT, note TEXT)\n"
                  "CREATE TABLE legacy (rowid TEXT, v INTEGER)")
    yield database
    database.close()


def test_rowid_is_the_integer_primary_key_and_survives_updates(db) -> None:  # type: ignore[no-untyped-def]
    ids = [db.prepare("INSERT INTO events (kind, note) VALUES (?, 'x')").bind(k).run().meta.last_row_id for k in "abcd"]
    assert ids == [1, 2, 3, 4]
    db.prepare("UPDATE events SET note = ?, kind = 'A' WHERE rowid = ?").bind("a much longer note " * 20, 1).run()
    db.prepare("UPDATE events SET note = 'y' WHERE oid IN (2, 3)").run()
    assert db.prepare("SELECT rowid, kind FROM events ORDER BY rowid").raw() == [[1, "A"], [2, "b"], [3, "c"], [4, "d"]]
    assert db.prepare("SELECT kind FROM events WHERE _rowid_ = ?").bind(3).first("kind") == "c"
    assert db.prepare("SELECT e.rowid FROM events AS e WHERE e.kind = 'A'").all().results == [{"id": 1}]  # SQLite's name
    assert db.prepare("SELECT max(rowid) FROM events").all().results == [{"max(rowid)": 4}]


def test_a_real_column_named_rowid_is_that_column(db) -> None:  # type: ignore[no-untyped-def]
    db.prepare("INSERT INTO legacy (rowid, v) VALUES ('b', 1), ('a', 2)").run()
    db.prepare("UPDATE legacy SET v = 3 WHERE rowid = 'b'").run()
    assert db.prepare("SELECT rowid, v FROM legacy ORDER BY rowid").raw() == [["a", 2], ["b", 3]]


def test_duckdb_refuses_rowid_without_an_integer_primary_key() -> None:
    db = DuckDBDatabase()
    db.exec("CREATE TABLE notes (name TEXT PRIMARY KEY, body TEXT)\nINSERT INTO notes VALUES ('a', 'x')")
    for sql in ("SELECT rowid FROM notes", "SELECT name FROM notes ORDER BY rowid", "DELETE FROM notes WHERE oid = 1"):
        with pytest.raises(D1Unsupported, match="INTEGER PRIMARY KEY"):
            db.prepare(sql).all()
    db.exec("CREATE TABLE more (id INTEGER PRIMARY KEY)")
    with pytest.raises(D1Error, match=r"^D1_ERROR: no such column: rowid: SQLITE_ERROR$"):  # SQLite's own answer
        db.prepare("SELECT rowid FROM more, notes").all()
    db.close()
