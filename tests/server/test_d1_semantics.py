"""D1 is SQLite over REST too: the DuckDB engine answers the way the sqlite engine (sqlite3, D1's own engine) does,
through `memory-sim serve` and the official SDK, where every bound value arrives as text. Each engine gets its own
server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import cloudflare
import pytest

from memory_sim.testing import TEST_TOKEN, ServerForTests, scratch_folder


@pytest.fixture(scope="module", params=["duckdb", "sqlite"])
def engine_sdk(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    folder = tmp_path_factory.mktemp(f"d1-{request.param}")
    with scratch_folder(folder) as data, ServerForTests(data, d1_engine=request.param) as running:
        client = cloudflare.Cloudflare(api_token=TEST_TOKEN, base_url=running.base_url, max_retries=0)
        yield client, running.fresh_account_id
        client.close()


@pytest.fixture
def database(engine_sdk: Any) -> Iterator[tuple[Any, str]]:
    sdk, fresh = engine_sdk
    account = fresh()
    made = sdk.d1.database.create(account_id=account, name="semantics").uuid

    def query(sql: str, *params: str) -> list[Any]:
        return list(sdk.d1.database.query(made, account_id=account, sql=sql, params=list(params)))

    query("CREATE TABLE t (id INTEGER PRIMARY KEY, c TEXT UNIQUE, n INTEGER)")
    query("INSERT INTO t (c, n) VALUES ('a', 3), ('b', 10)")
    yield query, made
    sdk.d1.database.delete(made, account_id=account)


def _one(query: Any, sql: str, *params: str) -> Any:
    rows = query(sql, *params)[-1].results
    return next(iter(rows[0].values()))


@pytest.mark.parametrize("sql, params, expected", [
    ("SELECT '3' = 3", (), 0),
    ("SELECT CAST('12abc' AS INTEGER)", (), 12),
    ("SELECT ? + 1", ("3",), 4),  # REST sends the parameter as the text "3"
    ("SELECT 1 + '1'", (), 2),
    ("SELECT 9223372036854775807 + 1", (), 9.223372036854776e18),  # INTEGER overflow becomes a REAL
    ("SELECT id FROM t WHERE n = ?", ("3",), 1),  # the column's affinity makes '3' a number
])
def test_values_answer_as_sqlite(database: tuple[Any, str], sql: str, params: tuple[str, ...], expected: Any) -> None:
    got = _one(database[0], sql, *params)
    assert got == expected and type(got) is type(expected), (sql, got)


def test_limit_minus_one_and_changes(database: tuple[Any, str]) -> None:
    query = database[0]
    assert query("SELECT id FROM t ORDER BY id LIMIT -1")[0].results == [{"id": 1}, {"id": 2}]
    done = query("UPDATE t SET n = n + 1; SELECT changes() AS n")
    assert done[0].meta.changes == 2 and done[1].results == [{"n": 2}]


def test_insert_or_replace_of_a_referenced_parent(database: tuple[Any, str]) -> None:
    query = database[0]
    query("CREATE TABLE parent (k TEXT PRIMARY KEY, v INTEGER); "
          "CREATE TABLE child (id INTEGER PRIMARY KEY, k TEXT REFERENCES parent(k))")
    query("INSERT INTO parent VALUES ('a', 1); INSERT INTO child (k) VALUES ('a')")
    query("INSERT OR REPLACE INTO parent VALUES ('a', 2)")
    assert query("SELECT v FROM parent")[0].results == [{"v": 2}]
    with pytest.raises(cloudflare.BadRequestError) as failed:
        query("DELETE FROM parent")
    assert failed.value.body["errors"][0]["message"] == "D1_ERROR: FOREIGN KEY constraint failed: SQLITE_CONSTRAINT"
    # PRAGMA defer_foreign_keys: the check waits for the end of the statements sent together
    query("PRAGMA defer_foreign_keys = ON; INSERT INTO child (k) VALUES ('b'); INSERT INTO parent VALUES ('b', 3)")
    assert query("SELECT count(*) AS n FROM child WHERE k = 'b'")[0].results == [{"n": 1}]


@pytest.mark.parametrize("sql, message", [
    ("SELECT * FROM nope", "D1_ERROR: no such table: nope: SQLITE_ERROR"),
    ("SELEC 1", 'D1_ERROR: near "SELEC": syntax error: SQLITE_ERROR'),
    ("INSERT INTO t (c) VALUES ('a')", "D1_ERROR: UNIQUE constraint failed: t.c: SQLITE_CONSTRAINT"),
])
def test_errors_in_d1s_words(database: tuple[Any, str], sql: str, message: str) -> None:
    with pytest.raises(cloudflare.BadRequestError) as failed:
        database[0](sql)
    error = failed.value.body["errors"][0]
    assert error["code"] == 7500 and error["message"] == message
