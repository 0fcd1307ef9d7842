"""The DuckDB engine creates the SQLite dialect's macros as statements first name them: what a statement, a stored
view, a column's DEFAULT or CHECK needs is there, also after a rollback undid the transaction that created it and
after the database is opened again."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_sim.errors import D1Error
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase


def _made(db: DuckDBDatabase) -> set[str]:
    rows = db._engine._conn.execute(  # type: ignore[attr-defined]
        "SELECT function_name FROM duckdb_functions() WHERE function_type = 'macro' AND function_name LIKE '__sq%'"
    ).fetchall()
    return {name for (name,) in rows}


def test_an_open_creates_no_macro_and_a_statement_creates_those_it_names() -> None:
    db = DuckDBDatabase()
    assert _made(db) == set()
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, s TEXT)")
    db.prepare("INSERT INTO t (n, s) VALUES (?, ?)").bind(1, "x").run()
    assert db.prepare("SELECT upper(s) FROM t").raw() == [["X"]]
    assert "__sq_upper" in _made(db) and len(_made(db)) < 5
    db.close()


def test_macros_a_rolled_back_batch_created_are_created_again() -> None:
    db = DuckDBDatabase()
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, a REAL, b TEXT, n INTEGER)")
    db.prepare("INSERT INTO t (a, n) VALUES (?, 2)").bind(2.5).run()
    reads = "SELECT n > a AS gt, upper(b) AS u FROM t"
    with pytest.raises(D1Error):
        db.batch([db.prepare(reads), db.prepare("SELECT * FROM nowhere")])
    assert {"__sq_gt_ir", "__sq_upper"}.isdisjoint(_made(db))  # undone with the batch
    assert db.prepare(reads).raw() == [[0, None]]
    db.batch([db.prepare("INSERT INTO t (b) VALUES (upper('y'))"), db.prepare("SELECT lower(b) FROM t")])
    assert db.prepare("SELECT a, b FROM t ORDER BY id").raw() == [[2.5, None], [None, "Y"]]
    db.close()


STORED = [
    "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b TEXT DEFAULT (upper('d')), c TEXT CHECK (upper(c) = c))",
    "CREATE VIEW v AS SELECT id, lower(b) AS lb, a > 1.5 AS big, a IS 2.0 AS two FROM t",
    "CREATE INDEX ia ON t (upper(b))",
]


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_stored_views_defaults_and_checks_work_after_the_database_opens_again(tmp_path: Path, engine: str) -> None:
    path = tmp_path / f"db.{engine}"
    db = DuckDBDatabase(path) if engine == "duckdb" else SqliteDatabase(path)
    db.exec("\n".join(STORED))
    db.close()
    again = DuckDBDatabase(path) if engine == "duckdb" else SqliteDatabase(path)
    again.prepare("INSERT INTO t (a, c) VALUES (?, 'Z')").bind(2).run()
    with pytest.raises(D1Error, match="CHECK constraint failed"):
        again.prepare("INSERT INTO t (a, c) VALUES (1, 'z')").run()
    assert again.prepare("SELECT id, lb, big, two FROM v").raw() == [[1, "d", 1, 1]]
    again.close()
