"""SQLite shorthands the DuckDB engine spells out (`x IN table`, INDEXED BY / NOT INDEXED): the same answers and
the same errors as sqlite3, D1's own engine."""

from __future__ import annotations

import pytest

from memory_sim.errors import D1Error
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

SETUP = [
    "CREATE TABLE t1 (a INTEGER, b INTEGER, c TEXT)",
    "INSERT INTO t1 VALUES (1, 2, 'x'), (3, 4, 'y'), (1, 5, 'x'), (NULL, 6, '12')",
    "CREATE TABLE t2 (x INTEGER)",
    "INSERT INTO t2 VALUES (1), (3)",
    "CREATE TABLE wide (x INTEGER, y INTEGER)",
    "CREATE INDEX i1 ON t1 (a)",
    'CREATE VIEW "v 1" AS SELECT x FROM t2 WHERE x > 1',
]
QUERIES = [
    "SELECT b FROM t1 WHERE a IN t2 ORDER BY b",
    "SELECT b FROM t1 WHERE a NOT IN t2 ORDER BY b",
    'SELECT b FROM t1 WHERE a IN "v 1" ORDER BY b',
    "SELECT b, a IN t2 AS hit FROM t1 ORDER BY b",
    "SELECT b FROM t1 WHERE a IN t2 AND b IN (SELECT b FROM t1 WHERE b < 5) ORDER BY b",
    "SELECT b FROM t1 INDEXED BY i1 WHERE a = 1 ORDER BY b",
    "SELECT z.b FROM t1 AS z INDEXED BY i1 WHERE z.a = 1 ORDER BY 1",
    "SELECT b FROM t1 NOT INDEXED WHERE a = 1 ORDER BY b",
    "SELECT count(*) FROM t1 INDEXED BY i1, t2 NOT INDEXED WHERE t1.a = t2.x",
    "UPDATE t1 INDEXED BY i1 SET b = b + 10 WHERE a = 1",
    "DELETE FROM t1 NOT INDEXED WHERE a = 3",
    "SELECT a, b FROM t1 ORDER BY b",
]
ERRORS = [
    "SELECT b FROM t1 INDEXED BY nope WHERE a = 1",
    "SELECT b FROM t1 WHERE a IN wide",
    "SELECT b FROM t1 WHERE a IN nowhere",
]


def _answers(database: SqliteDatabase | DuckDBDatabase, queries: list[str]) -> list[object]:
    for sql in SETUP:
        database.prepare(sql).run()
    out: list[object] = []
    for sql in queries:
        try:
            out.append(database.prepare(sql).raw())
        except D1Error as exc:
            out.append(str(exc))
    database.close()
    return out


def test_duckdb_answers_the_shorthands_as_sqlite_does() -> None:
    expected = _answers(SqliteDatabase(), QUERIES)
    assert all(isinstance(answer, list) for answer in expected)
    assert _answers(DuckDBDatabase(), QUERIES) == expected


@pytest.mark.parametrize("sql", ERRORS)
def test_what_sqlite_refuses_fails_with_sqlites_error(sql: str) -> None:
    expected = _answers(SqliteDatabase(), [sql])
    assert isinstance(expected[0], str) and expected[0].startswith("D1_ERROR: ")
    assert _answers(DuckDBDatabase(), [sql]) == expected


def test_a_column_named_indexed_is_not_a_hint() -> None:
    for engine in (SqliteDatabase(), DuckDBDatabase()):
        engine.prepare("CREATE TABLE f (id INTEGER PRIMARY KEY, indexed INTEGER)").run()
        engine.prepare("INSERT INTO f (indexed) VALUES (0), (1)").run()
        assert engine.prepare("SELECT id FROM f WHERE NOT indexed").raw() == [[1]]
        engine.close()


def test_a_column_assigned_twice_takes_the_rightmost_value() -> None:
    statements = ["UPDATE t1 SET b = 0, b = 7, c = 'z' WHERE a = 1", 'UPDATE t1 SET c = c || \'!\', "C" = upper(c)',
                  "SELECT a, b, c FROM t1 ORDER BY b, c"]
    answers = [_answers(engine, statements) for engine in (SqliteDatabase(), DuckDBDatabase())]
    assert answers[0][-1] != [] and answers[1] == answers[0]
