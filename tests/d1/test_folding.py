"""Where SQLite folds an expression, and where it does not, decides whether an aggregate in it makes the query an
aggregate (one row where no row matches): an operator with a NULL operand keeps its other operand; `0 AND x` (an
integer token 0) is folded to 0 as SQLite parses it, x dropped unread. sqlite3, D1's engine, is the reference."""

from __future__ import annotations

import pytest

from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

QUERIES = [
    "SELECT NULL * count(*) FROM t WHERE 0",
    "SELECT 62 AS a, CAST(NULL AS INTEGER) * - count(*) FROM t WHERE a IN (a + 10, 99)",
    "SELECT NULL = count(*) FROM t WHERE 0",
    "SELECT NULL IN (count(*)) FROM t WHERE 0",
    "SELECT count(*) IN (NULL) FROM t WHERE 0",
    "SELECT NULL < max(a) FROM t WHERE 0",
    "SELECT NULL % count(*) FROM t",
    "SELECT NULL * a FROM t ORDER BY 1",
    "SELECT a + NULL, NULL - 1 FROM t ORDER BY 1",
    "SELECT 0 AND count(a) FROM t WHERE a",
    "SELECT (0) AND count(a) FROM t",
    "SELECT count(a) AND FALSE FROM t",
    "SELECT -0 AND count(a) FROM t",
    "SELECT 0x0 AND count(a) FROM t",
    "SELECT 0 AND abs(-9223372036854775808)",
    "SELECT 0.0 AND count(*) FROM t",
    "SELECT avg(DISTINCT + CAST(NULL AS INTEGER)) / CAST(-77 AS INTEGER) + -47 FROM t",
    "SELECT max(NULL) = 3, min(NULL) || 'x' FROM t WHERE 0",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_duckdb_answers_as_sqlite(sql: str) -> None:
    answers = []
    for database in (SqliteDatabase(), DuckDBDatabase()):
        database.prepare("CREATE TABLE t (a INTEGER)").run()
        database.prepare("INSERT INTO t VALUES (1), (2)").run()
        answers.append(database.prepare(sql).raw())
        database.close()
    assert answers[0] != [] and answers[1] == answers[0]


def test_a_distinct_average_of_texts_is_refused_not_answered_otherwise() -> None:
    """SQLite drops repeated texts ('3' and '3.0' are two values), then averages them as numbers."""
    database = DuckDBDatabase()
    database.prepare("CREATE TABLE s (v TEXT)").run()
    database.prepare("INSERT INTO s VALUES ('3'), ('3.0'), ('x')").run()
    with pytest.raises(D1Unsupported, match=r"avg\(DISTINCT ...\).*sqlite engine"):
        database.prepare("SELECT avg(DISTINCT v) FROM s").raw()
    assert database.prepare("SELECT avg(v) FROM s").raw() == [[2.0]]
