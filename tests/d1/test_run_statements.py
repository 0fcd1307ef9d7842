"""`D1CoreDatabase.run_statements`: several statements in one transaction, column names kept (`raw=True`), and
the failing statement's index on the error; on both engines (the REST server's `/query` and `/raw` use it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_sim.bindings.d1 import D1Result
from memory_sim.errors import D1Error, D1StatementError
from memory_sim.local.d1.core import D1CoreDatabase, RawResult
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase


@pytest.fixture(params=["sqlite", "duckdb"])
def core(request: pytest.FixtureRequest) -> Iterator[D1CoreDatabase]:
    database = SqliteDatabase() if request.param == "sqlite" else DuckDBDatabase()
    database.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, data BLOB)")
    yield database
    database.close()


def test_query_shape_results_and_meta(core: D1CoreDatabase) -> None:
    results = core.run_statements([
        ("INSERT INTO t (name) VALUES (?)", ["ada"]),
        ("INSERT INTO t (name, data) VALUES (?, ?)", ["bob", b"\x00\xff"]),
        ("SELECT id, name, data FROM t ORDER BY id", []),
    ])
    assert all(isinstance(r, D1Result) for r in results)
    assert [r.meta.last_row_id for r in results[:2]] == [1, 2]
    assert [r.meta.changes for r in results[:2]] == [1, 1]
    assert results[2].results == [{"id": 1, "name": "ada", "data": None}, {"id": 2, "name": "bob", "data": [0, 255]}]
    assert results[2].meta.rows_read == 2


def test_raw_keeps_column_names_without_rows(core: D1CoreDatabase) -> None:
    empty, full = core.run_statements([("SELECT id, name FROM t", []), ("SELECT 7 AS n, ?1 AS b", [b"\x01"])], raw=True)
    assert isinstance(empty, RawResult) and isinstance(full, RawResult)
    assert (empty.columns, empty.rows) == (["id", "name"], [])
    assert (full.columns, full.rows) == (["n", "b"], [[7, [1]]])
    assert full.to_json()["results"] == {"columns": ["n", "b"], "rows": [[7, [1]]]}
    assert full.to_json()["success"] is True and full.meta.rows_read == 1


def test_raw_many_rows_match_the_binding(core: D1CoreDatabase) -> None:
    core.batch([core.prepare("INSERT INTO t (name) VALUES (?)").bind(f"n{i}") for i in range(200)])
    (raw,) = core.run_statements([("SELECT id, name FROM t ORDER BY id", [])], raw=True)
    assert raw.rows == core.prepare("SELECT id, name FROM t ORDER BY id").raw()
    assert len(raw.rows) == 200 and raw.meta.rows_read == 200


def test_failure_names_the_statement_and_rolls_back(core: D1CoreDatabase) -> None:
    with pytest.raises(D1StatementError) as caught:
        core.run_statements([
            ("INSERT INTO t (name) VALUES (?)", ["kept?"]),
            ("INSERT INTO t (name) VALUES (?)", ["also"]),
            ("INSERT INTO t (name) VALUES (NULL)", []),
        ])
    assert caught.value.index == 2
    assert isinstance(caught.value, D1Error) and str(caught.value) == str(caught.value.error)
    assert str(caught.value).startswith("D1_ERROR: ") and "NOT NULL" in str(caught.value)
    assert core.prepare("SELECT count(*) AS n FROM t").first("n") == 0


def test_bind_errors_name_the_statement_before_anything_runs(core: D1CoreDatabase) -> None:
    with pytest.raises(D1StatementError) as caught:
        core.run_statements([("INSERT INTO t (name) VALUES (?)", ["x"]), ("SELECT ?", [{"no": "dicts"}])])
    assert caught.value.index == 1
    assert str(caught.value).startswith("D1_TYPE_ERROR: Type 'dict' not supported")
    with pytest.raises(D1StatementError) as wrong_count:
        core.run_statements([("SELECT ?1, ?2", [1])])
    assert wrong_count.value.index == 0 and "Wrong number of parameter bindings" in str(wrong_count.value)
    assert core.prepare("SELECT count(*) AS n FROM t").first("n") == 0
