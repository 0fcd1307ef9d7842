"""A scalar subquery in an INSERT's VALUES rows (remember's `seq`: the highest so far + the row's position) answers as
SQLite answers it: read once, before any row of the statement is written; NULL for no row. The DuckDB engine asks
DuckDB for it once a statement and binds the value (written inline, DuckDB plans a join for each row's copy), so
these run on both engines and compare. One that returns several rows is refused on DuckDB as it was inline
(SQLite's first row is in an order DuckDB does not keep)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory_sim.errors import D1Error, D1Unsupported
from memory_sim.local.d1 import duckdb_engine
from memory_sim.local.d1.core import D1CoreDatabase
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase, DuckDBEngine
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

SCHEMA = "CREATE TABLE m (id TEXT PRIMARY KEY, who TEXT, r REAL, seq INTEGER)"
SEQ = "COALESCE((SELECT MAX(seq) FROM m), 0)"
STATEMENTS: list[tuple[str, list[Any]]] = [
    # every row reads the table as it was before the statement: seq 1, 2, 3 (not 1, 3, 6)
    (f"INSERT INTO m VALUES ('a', 'x', 0.5, {SEQ} + 1), ('b', 'y', 1.5, {SEQ} + 2), ('c', ?, 2.5, {SEQ} + 3)"
     " RETURNING id, seq", ["z"]),
    (f"INSERT INTO m VALUES ('d', (SELECT who FROM m ORDER BY id LIMIT 1), (SELECT avg(r) FROM m), {SEQ} + 1)"
     " RETURNING *", []),
    # none: NULL
    ("INSERT INTO m VALUES ('e', (SELECT who FROM m WHERE id = 'none'), (SELECT r FROM m ORDER BY r DESC LIMIT 1),"
     " (SELECT count(*) FROM m)) RETURNING *", []),
    # a subquery that binds a value of its own stays inline
    ("INSERT INTO m VALUES ('f', (SELECT who FROM m WHERE id = ?), 0, (SELECT MAX(seq) FROM m WHERE id <> ?) + 1)"
     " RETURNING *", ["a", "e"]),
    (f"INSERT OR IGNORE INTO m VALUES ('a', 'dup', 0, {SEQ} + 1), ('g', 'new', 0, {SEQ} + 1) RETURNING id, seq", []),
    (f"INSERT INTO m VALUES ('h', 'x', 0, {SEQ} + 1) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq"
     " RETURNING id, seq", []),
    ("INSERT INTO m VALUES ('i', 'x', (SELECT 1e308 * 10), (SELECT 9223372036854775807)) RETURNING *", []),
    ("SELECT * FROM m ORDER BY id", []),
]


@pytest.fixture(params=["sqlite", "duckdb"])
def db(request: pytest.FixtureRequest) -> Iterator[D1CoreDatabase]:
    database: D1CoreDatabase = SqliteDatabase() if request.param == "sqlite" else DuckDBDatabase()
    database.exec(SCHEMA)
    yield database
    database.close()


def _answers(database: D1CoreDatabase) -> list[Any]:
    out: list[Any] = []
    for sql, params in STATEMENTS:
        try:
            out.append(database.prepare(sql).bind(*params).raw())
        except D1Error as exc:
            out.append(str(exc))
    return out


def test_values_subqueries_answer_as_sqlite() -> None:
    sqlite, duck = SqliteDatabase(), DuckDBDatabase()
    try:
        for database in (sqlite, duck):
            database.exec(SCHEMA)
        expected, got = _answers(sqlite), _answers(duck)
    finally:
        sqlite.close()
        duck.close()
    assert got == expected
    assert [row[3] for row in expected[-1]] == [1, 2, 3, 4, 4, 5, 6, 7, 9223372036854775807]


def test_identical_subqueries_are_asked_once_and_bound() -> None:
    engine = DuckDBEngine()
    try:
        engine.execute(SCHEMA, [])
        translation = engine._translate(
            f"INSERT INTO m VALUES ('a', 'x', 0, {SEQ} + 1), ('b', 'y', 0, {SEQ} + 2)", [])
        hoisted = [name for name in translation.extras if name.startswith("sq:")]
        assert hoisted == ["sq:SELECT max(seq) FROM m"]
        assert "SELECT" not in translation.sql  # both rows read the one bound value
        replace = engine._translate(f"INSERT OR REPLACE INTO m VALUES ('a', 'x', 0, {SEQ} + 1)", [])
        assert not any(name.startswith("sq:") for name in replace.extras)  # its plan deletes rows first
    finally:
        engine.close()


def test_a_failing_subquery_fails_the_statement_in_sqlites_words(db: D1CoreDatabase) -> None:
    db.exec("INSERT INTO m VALUES ('a', 'x', 0, 1)")
    with pytest.raises(D1Error, match="sub-select returns 2 columns"):
        db.prepare("INSERT INTO m VALUES ('b', (SELECT who, id FROM m), 0, 2)").run()
    assert db.prepare("SELECT count(*) FROM m").raw() == [[1]]


def test_several_rows_are_refused_on_duckdb_as_inline_and_nothing_is_written() -> None:
    database = DuckDBDatabase()
    try:
        database.exec(SCHEMA)
        database.exec("INSERT INTO m VALUES ('a', 'x', 0, 1)\nINSERT INTO m VALUES ('b', 'y', 0, 2)")
        with pytest.raises(D1Unsupported, match="returned more than one row: SQLite takes the first row"):
            database.prepare("INSERT INTO m VALUES ('c', (SELECT who FROM m), 0, 3), ('d', 'z', 0, 4)").run()
        assert database.prepare("SELECT count(*) FROM m").raw() == [[2]]
    finally:
        database.close()


def test_the_hoisted_text_passes_the_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[str] = []
    monkeypatch.setattr(duckdb_engine, "check_duckdb_text", checked.append)
    engine = DuckDBEngine()
    try:
        engine.execute(SCHEMA, [])
        engine.execute(f"INSERT INTO m VALUES ('a', 'x', 0, {SEQ} + 1)", [])
    finally:
        engine.close()
    assert "SELECT max(seq) FROM m" in checked
