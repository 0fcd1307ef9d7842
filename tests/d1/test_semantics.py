"""D1 is SQLite: the DuckDB engine answers as sqlite3 does or refuses in one line naming the construct and the SQLite
alternative, never differently. The issue's reproductions, on both engines (and through `run_statements`, which
REST's /query uses, where every parameter arrives as text)."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from memory_sim.errors import D1Error, D1Unsupported
from memory_sim.local.d1.core import D1CoreDatabase
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

ENGINES = {"sqlite": SqliteDatabase, "duckdb": DuckDBDatabase}


@pytest.fixture(params=sorted(ENGINES))
def db(request: pytest.FixtureRequest) -> Iterator[D1CoreDatabase]:
    database = ENGINES[request.param]()
    database.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, c TEXT UNIQUE, n INTEGER, r REAL)\n"
                  "INSERT INTO t (c, n, r) VALUES ('a', 3, 1.5)\nINSERT INTO t (c, n, r) VALUES ('b', 10, 2.0)")
    yield database
    database.close()


def _value(db: D1CoreDatabase, sql: str, *params: Any) -> Any:
    return db.prepare(sql).bind(*params).raw()[0][0]


@pytest.mark.parametrize("sql, expected", [
    ("SELECT '3' = 3", 0),  # a text is never equal to a number without a column's affinity
    ("SELECT 3 < '3'", 1),  # numbers sort before text
    ("SELECT CAST('12abc' AS INTEGER)", 12),  # the numeric prefix
    ("SELECT CAST('abc' AS INTEGER)", 0),
    ("SELECT 1 + '1'", 2),
    ("SELECT '12abc' + 1", 13),
    ("SELECT 9223372036854775807 + 1", 9.223372036854776e18),  # INTEGER overflow becomes a REAL
    ("SELECT 0x10", 16),
    ("SELECT 1 + 2 || 'x'", 3),  # || binds tighter than +: 1 + ('2' || 'x') = 1 + '2x'
    ("SELECT 7.5 % 2", 1.0),
    ("SELECT 0.1 + 0.2", 0.30000000000000004),  # REALs, not decimals
    ("SELECT round(1.005, 2)", 1.01),  # SQLite's own rounding
    ("SELECT upper('ä')", "ä"),  # ASCII only without ICU
    ("SELECT 9007199254740993 = 9007199254740992.0", 0),  # an INTEGER against a REAL, exactly
])
def test_expressions_answer_as_sqlite(db: D1CoreDatabase, sql: str, expected: Any) -> None:
    got = _value(db, sql)
    assert got == expected and type(got) is type(expected), (sql, got)


def test_text_parameters_as_rest_sends_them(db: D1CoreDatabase) -> None:
    assert _value(db, "SELECT ? + 1", "3") == 4
    assert _value(db, "SELECT id FROM t WHERE n = ?", "3") == 1  # the column's affinity makes '3' a number
    assert db.prepare("SELECT id FROM t WHERE ? = n + 0").bind("3").raw() == []  # no affinity: text <> number
    results = db.run_statements([("SELECT ? + 1 AS four", ["3"]), ("SELECT c FROM t WHERE n > ? ORDER BY id", ["4"])])
    assert [r.results for r in results] == [[{"four": 4}], [{"c": "b"}]]  # type: ignore[union-attr]


def test_limit_and_offset_as_sqlite_reads_them(db: D1CoreDatabase) -> None:
    assert db.prepare("SELECT id FROM t ORDER BY id LIMIT -1").raw() == [[1], [2]]
    assert db.prepare("SELECT id FROM t ORDER BY id LIMIT '1' OFFSET -5").raw() == [[1]]
    assert db.prepare("SELECT id FROM t ORDER BY id LIMIT 1, 1").raw() == [[2]]  # LIMIT offset, count
    with pytest.raises(D1Error, match=r"^D1_ERROR: datatype mismatch: SQLITE_MISMATCH$"):
        db.prepare("SELECT id FROM t LIMIT 1.5").all()


def test_changes_and_total_changes(db: D1CoreDatabase) -> None:
    db.prepare("UPDATE t SET n = n + 1").run()
    assert _value(db, "SELECT changes()") == 2
    db.prepare("DELETE FROM t WHERE id = 1").run()
    assert _value(db, "SELECT changes()") == 1


def test_values_are_stored_as_their_column_keeps_them(db: D1CoreDatabase) -> None:
    db.prepare("INSERT INTO t (c, n, r) VALUES (?, ?, ?)").bind("x", "42", "7").run()  # as REST binds them
    assert db.prepare("SELECT n, typeof(n), r, typeof(r) FROM t WHERE c = 'x'").raw() == [[42, "integer", 7.0, "real"]]
    db.prepare("INSERT INTO t (c, n) VALUES ('y', 5.0)").run()
    assert db.prepare("SELECT n, typeof(n) FROM t WHERE c = 'y'").raw() == [[5, "integer"]]


def test_error_texts_are_sqlites_in_d1s_form(db: D1CoreDatabase) -> None:
    cases = {
        "SELECT * FROM nope": "D1_ERROR: no such table: nope: SQLITE_ERROR",
        "SELEC 1": 'D1_ERROR: near "SELEC": syntax error: SQLITE_ERROR',
        "SELECT nope FROM t": "D1_ERROR: no such column: nope: SQLITE_ERROR",
        "INSERT INTO t (c) VALUES ('a')": "D1_ERROR: UNIQUE constraint failed: t.c: SQLITE_CONSTRAINT",
        "SELECT abs(-9223372036854775808)": "D1_ERROR: integer overflow: SQLITE_ERROR",
    }
    for sql, message in cases.items():
        with pytest.raises(D1Error) as caught:
            db.prepare(sql).all()
        assert str(caught.value) == message, sql


def test_duckdb_refuses_in_one_line_naming_the_alternative() -> None:
    db = DuckDBDatabase()
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, s TEXT)\nINSERT INTO t (n, s) VALUES (9223372036854775807, 'a')")
    refusals = {
        "SELECT n + 1 FROM t": ("integer overflow", "CAST an operand AS REAL"),
        "INSERT INTO t (n) VALUES ('abc')": ("INTEGER column t.n", "declare the column with the type you store"),
        "SELECT sum(s) FROM t": ("sum()", "CAST the argument AS INTEGER or AS REAL"),
        "SELECT random()": ("random()", "bind them"),
    }
    for sql, (construct, alternative) in refusals.items():
        with pytest.raises(D1Unsupported) as caught:
            db.prepare(sql).all()
        text = str(caught.value)
        assert construct in text and alternative in text and "\n" not in text, text
        assert text.startswith("D1_ERROR: ") and text.endswith(": SQLITE_ERROR")
        assert "Binder Error" not in text and "__sq_" not in text and "Did you mean" not in text
    db.close()


def test_insert_or_replace_of_a_referenced_parent(db: D1CoreDatabase) -> None:
    """SQLite deletes and re-inserts within the statement; the foreign key holds at its end."""
    db.exec("CREATE TABLE parent (k TEXT PRIMARY KEY, v INTEGER)\n"
            "CREATE TABLE child (id INTEGER PRIMARY KEY, k TEXT REFERENCES parent(k))\n"
            "INSERT INTO parent VALUES ('a', 1)\nINSERT INTO child (k) VALUES ('a')")
    db.prepare("INSERT OR REPLACE INTO parent VALUES ('a', 2)").run()
    assert db.prepare("SELECT v FROM parent").raw() == [[2]]
    with pytest.raises(D1Error, match=r"^D1_ERROR: FOREIGN KEY constraint failed: SQLITE_CONSTRAINT$"):
        db.prepare("DELETE FROM parent WHERE k = 'a'").run()
    assert db.prepare("SELECT count(*) FROM parent").raw() == [[1]]
