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


@pytest.fixture(params=sorted(ENGINES))
def keyed(request: pytest.FixtureRequest) -> Iterator[D1CoreDatabase]:
    database = ENGINES[request.param]()
    database.exec("CREATE TABLE q (id INTEGER PRIMARY KEY, u TEXT UNIQUE, m INTEGER NOT NULL DEFAULT 0)\n"
                  "INSERT INTO q VALUES (1, 'a', 1)\nINSERT INTO q VALUES (3, 'b', 2)")
    yield database
    database.close()


def _rows(db: D1CoreDatabase) -> list[list[Any]]:
    return db.prepare("SELECT * FROM q ORDER BY id").raw()


def test_several_rows_get_ids_as_sqlite_gives_them_one_by_one(keyed: D1CoreDatabase) -> None:
    """A NULL id is one more than the largest rowid so far, counting ids earlier rows of the statement gave."""
    done = keyed.prepare("INSERT INTO q (id, u) VALUES (NULL, 'c'), (7, 'd'), (?, 'e')").bind(None).run()
    assert [r[0] for r in _rows(keyed)] == [1, 3, 4, 7, 8] and done.meta.last_row_id == 8
    keyed.prepare("DELETE FROM q").run()
    keyed.prepare("INSERT INTO q (id, u) VALUES (-5, 'x')").run()
    keyed.prepare("INSERT INTO q (u) VALUES ('y'), ('z')").run()
    assert [r[0] for r in _rows(keyed)] == [-5, -4, -3]  # max + 1, also below zero


def test_insert_or_ignore_skips_a_null_in_a_not_null_column(keyed: D1CoreDatabase) -> None:
    done = keyed.prepare("INSERT OR IGNORE INTO q (id, u, m) VALUES (5, 'c', NULL), (6, 'd', 4)").run()
    assert done.meta.changes == 1 and _rows(keyed)[-1] == [6, "d", 4]


def test_replace_stores_the_default_for_a_null_in_a_not_null_column(keyed: D1CoreDatabase) -> None:
    keyed.prepare("INSERT OR REPLACE INTO q (id, u, m) VALUES (1, 'a', NULL)").run()
    assert _rows(keyed)[0] == [1, "a", 0]


def test_an_upsert_of_null_into_a_not_null_column_fails_even_on_a_conflict(keyed: D1CoreDatabase) -> None:
    for tail in ("DO NOTHING", "DO UPDATE SET m = 9"):
        with pytest.raises(D1Error, match=r"^D1_ERROR: NOT NULL constraint failed: q.m: SQLITE_CONSTRAINT$"):
            keyed.prepare(f"INSERT INTO q (u, m) VALUES ('a', NULL) ON CONFLICT (u) {tail}").run()
    assert _rows(keyed) == [[1, "a", 1], [3, "b", 2]]


def test_numbering_that_only_running_rows_one_by_one_tells_is_refused_on_duckdb() -> None:
    """SQLite numbers only the rows it inserts, and a later upsert row updates an earlier one: the DuckDB engine
    refuses rather than answering otherwise; sqlite3 answers."""
    statements = [
        "INSERT OR IGNORE INTO q (u) VALUES ('a'), ('c')",
        "INSERT INTO q (u) VALUES ('a'), ('c') ON CONFLICT DO NOTHING",
        "INSERT INTO q (id, u) VALUES (1, 'x'), (1, 'y') ON CONFLICT (id) DO UPDATE SET u = excluded.u",
        "INSERT OR REPLACE INTO q (id, u) VALUES (-3, 'b'), (NULL, 'c')",
    ]
    for sql in statements:
        for name, engine in ENGINES.items():
            db = engine()
            db.exec("CREATE TABLE q (id INTEGER PRIMARY KEY, u TEXT UNIQUE, m INTEGER NOT NULL DEFAULT 0)\n"
                    "INSERT INTO q VALUES (1, 'a', 1)\nINSERT INTO q VALUES (3, 'b', 2)")
            if name == "sqlite":
                db.prepare(sql).run()
            else:
                with pytest.raises(D1Unsupported) as caught:
                    db.prepare(sql).run()
                assert "\n" not in str(caught.value) and _rows(db) == [[1, "a", 1], [3, "b", 2]], sql
            db.close()
