"""Every INSERT form an import holds goes through the DuckDB engine's bulk path (bulk.py) with SQLite's meaning:
each SQL file runs through the import's own path (sql_stream: statements, literals bound) on both engines, the
sqlite engine as the oracle: the same rows with the same types, the same totals (changes, last_row_id), and for a
file that fails, the same error at the same statement. A spy on the engine counts the statements it ran as one,
so a form that silently fell back to one-by-one fails here too."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from memory_sim.errors import D1StatementError
from memory_sim.local.d1.core import D1CoreDatabase
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase, DuckDBEngine
from memory_sim.local.d1.sqlite_engine import SqliteDatabase
from memory_sim.server.sql_stream import statements, with_parameters

SCHEMA = """CREATE TABLE npcs (id INTEGER PRIMARY KEY, name TEXT NOT NULL, mood REAL, note TEXT, code TEXT UNIQUE);
CREATE TABLE "odd table" ("the id" INTEGER PRIMARY KEY AUTOINCREMENT, "value" TEXT, [n] INTEGER);
CREATE TABLE plain (a TEXT, b INTEGER, c BLOB);
"""


class Spy:
    """Counts the statements the DuckDB engine ran as one (bulk) while installed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bulk = 0
        original = DuckDBEngine.execute_run

        def spied(engine: DuckDBEngine, sql: str, rows: Any) -> Any:
            outcomes = original(engine, sql, rows)
            self.bulk += len(outcomes or [])
            return outcomes

        monkeypatch.setattr(DuckDBEngine, "execute_run", spied)


def text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def run_file(db: D1CoreDatabase, sql: str) -> Any:
    try:
        totals = db.run_script(with_parameters(s) for s in statements([sql]))
    except D1StatementError as exc:
        return ("error", str(exc), exc.index)
    return ("ok", totals.statements, totals.changes, totals.last_row_id)


def contents(db: D1CoreDatabase) -> list[Any]:
    found = []
    for table in ("npcs", '"odd table"', "plain"):
        found.append(db.prepare(f"SELECT *, {', '.join(f'typeof({c})' for c in columns(db, table))} FROM {table} "
                                "ORDER BY 1, 2, 3").raw())
    return found


def columns(db: D1CoreDatabase, table: str) -> list[str]:
    names = [row[1] for row in db.prepare(f"PRAGMA table_info({table})").raw()]
    return ['"' + n.replace('"', '""') + '"' for n in names]


def both(sql: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Spy]:
    """Runs SCHEMA then `sql` on both engines; asserts they agree; the outcome and the DuckDB spy."""
    oracle, duck = SqliteDatabase(), DuckDBDatabase()
    spy = Spy(monkeypatch)
    for db in (oracle, duck):
        db.run_script((s, ()) for s in statements([SCHEMA]))
    expected, got = run_file(oracle, sql), run_file(duck, sql)
    assert got == expected
    assert contents(duck) == contents(oracle)
    return got, spy


def dump_rows(count: int, seed: int) -> Iterator[tuple[int, str, str, str, str]]:
    rng = random.Random(seed)
    for i in range(1, count + 1):
        mood = rng.choice([f"{rng.random():.4f}", str(rng.randint(-3, 3)), "NULL", "1e3", "-0.0"])
        note = rng.choice(["NULL", text(f"Tom's note {i}; the mill"), text("")])
        yield i, text(f"npc-{i % 7}"), mood, note, text(f"c{i}") if rng.random() < 0.8 else "NULL"


FORMS = {
    # wrangler d1 export: no column list, the key given
    "dump": lambda rows: "".join(f"INSERT INTO npcs VALUES({i},{n},{m},{t},{c});\n" for i, n, m, t, c in rows),
    "quoted dump": lambda rows: "".join(f'INSERT INTO "npcs" VALUES ({i}, {n}, {m}, {t}, {c});\n'
                                        for i, n, m, t, c in rows),
    "columns with key": lambda rows: "".join(f"INSERT INTO npcs (code, id, name, mood, note) VALUES ({c}, {i}, {n}, "
                                             f"{m}, {t});\n" for i, n, m, t, c in rows),
    "columns without key": lambda rows: "".join(f"INSERT INTO npcs (name, mood, note, code) VALUES ({n}, {m}, {t}, "
                                                f"{c});\n" for i, n, m, t, c in rows),
    "null and sparse keys": lambda rows: "".join(
        f"INSERT INTO npcs VALUES ({'NULL' if i % 3 == 0 else i * 10 - 500}, {n}, {m}, {t}, {c});\n"
        for i, n, m, t, c in rows),
    "multi-row": lambda rows: "".join(
        "INSERT INTO npcs (id, name, mood, note, code) VALUES "
        + ", ".join(f"({i}, {n}, {m}, {t}, {c})" for i, n, m, t, c in chunk) + ";\n"
        for chunk in _chunks(list(rows), 4)),
    # more values than D1 binds in one statement, as hand-written files hold them
    "big multi-row": lambda rows: "".join(
        "INSERT INTO npcs VALUES " + ",\n".join(f"({i}, {n}, {m}, {t}, {c})" for i, n, m, t, c in chunk) + ";\n"
        for chunk in _chunks(list(rows), 150)),
}


def _chunks(rows: list[Any], size: int) -> Iterator[list[Any]]:
    for at in range(0, len(rows), size):
        yield rows[at:at + size]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_insert_form_runs_in_bulk_as_sqlite_runs_it(form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # a table without INTEGER PRIMARY KEY first: the DuckDB engine does not give its hidden rowids (last_row_id)
    sql = "".join(f"INSERT INTO plain VALUES ('a{k}', {k}, X'0a{k % 10}f');\n" for k in range(50))
    sql += FORMS[form](dump_rows(300, seed=len(form)))
    sql += "".join(f'INSERT INTO "odd table" ("value", [n]) VALUES ({text(f"v{k}")}, {k});\n' for k in range(50))
    sql += "".join(f"INSERT INTO `odd table` VALUES (NULL, 'w', {k});\n" for k in range(50))
    outcome, spy = both(sql, monkeypatch)
    assert outcome[0] == "ok"
    assert spy.bulk >= outcome[1] - 4  # all but the first of a run's pieces at most: every form went in bulk


FAILURES = {
    "a key repeated in the file": "INSERT INTO npcs VALUES (5, 'x', 1.0, NULL, NULL);\n",
    "a key already in the table": "INSERT INTO npcs VALUES (3, 'x', 1.0, NULL, NULL);\n",
    "a unique value repeated": "INSERT INTO npcs VALUES (900, 'x', 1.0, NULL, 'c3');\n",
    "NULL in a NOT NULL column": "INSERT INTO npcs VALUES (901, NULL, 1.0, NULL, NULL);\n",
}


@pytest.mark.parametrize("failure", sorted(FAILURES))
@pytest.mark.parametrize("at", [0, 1, 37])
def test_the_first_failing_statement_fails_with_sqlites_words_and_its_own_index(
        failure: str, at: int, monkeypatch: pytest.MonkeyPatch) -> None:
    before = ("INSERT INTO npcs (id, name, code) VALUES (3, 'three', 'c3');\n"
              "INSERT INTO npcs VALUES (5, 'five', 0.5, NULL, NULL);\n")
    rows = [f"INSERT INTO npcs VALUES ({100 + k}, 'n', {k}.5, NULL, 'k{k}');\n" for k in range(60)]
    if failure == "a key repeated in the file":
        rows.insert(at, f"INSERT INTO npcs VALUES ({100 + at + 1 if at else 100}, 'x', 1.0, NULL, NULL);\n")
    else:
        rows.insert(at, FAILURES[failure])
    outcome, _ = both(before + "".join(rows), monkeypatch)
    assert outcome[0] == "error" and "SQLITE_CONSTRAINT" in outcome[1]


@pytest.mark.parametrize("row", [0, 1, 149])
def test_a_big_multi_row_insert_fails_as_one_statement(row: int, monkeypatch: pytest.MonkeyPatch) -> None:
    values = [f"({k + 10}, 'n', -{k}.25, NULL, 'k{k}')" for k in range(150)]
    values[row] = "(10, 'twice', 1e3, NULL, NULL)" if row else "(3, 'taken', 1, NULL, NULL)"
    sql = "INSERT INTO npcs VALUES (3, 'three', 0.5, NULL, 'c3');\nINSERT INTO npcs VALUES " + ", ".join(values) + ";\n"
    outcome, _ = both(sql, monkeypatch)
    assert outcome[0] == "error" and outcome[2] == 1 and "UNIQUE constraint failed: npcs.id" in outcome[1]


def test_values_a_column_keeps_otherwise_still_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Text in an INTEGER column, integers among REALs, blobs and text keys: what the bulk path may not take runs
    statement by statement, and the results agree either way."""
    sql = "".join([
        "INSERT INTO npcs VALUES (1, 'a', 1, NULL, NULL);\n",
        "INSERT INTO npcs VALUES (2, 'b', 2.5, NULL, NULL);\n",
        "INSERT INTO npcs VALUES ('3', 'c', '4.5', 7, 'x');\n",
        "INSERT INTO npcs VALUES (4.0, 'd', '-2e1', 8.25, 'z');\n",
        "INSERT INTO npcs VALUES (-7, 'e', 3, NULL, NULL), (NULL, 'f', 2.5, NULL, NULL);\n",
        "INSERT INTO npcs VALUES (NULL, 'g', 1, NULL, NULL), (NULL, 'h', 2, NULL, NULL);\n" * 2,
    ])
    outcome, _ = both(sql, monkeypatch)
    assert outcome == ("ok", 7, 10, 9)


def test_databases_with_the_same_schema_share_translations() -> None:
    from memory_sim.local.d1.dialect.statements import translate

    first, second, other = DuckDBDatabase(), DuckDBDatabase(), DuckDBDatabase()
    for db in (first, second):
        db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, note TEXT)")
    other.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, note INTEGER)")  # same names, another column type
    sql = "SELECT note || 'x' AS n FROM t WHERE id > ? ORDER BY id"
    first.prepare(sql).bind(0).all()
    hits = translate.cache_info().hits
    second.prepare("INSERT INTO t (note) VALUES ('a')").run()
    assert second.prepare(sql).bind(0).all().results == [{"n": "ax"}]
    assert translate.cache_info().hits == hits + 1  # the first database's translation, reused
    other.prepare("INSERT INTO t (note) VALUES (7)").run()
    misses = translate.cache_info().misses
    assert other.prepare(sql).bind(0).all().results == [{"n": "7x"}]
    assert translate.cache_info().misses == misses + 1  # another schema: translated for it


@pytest.mark.parametrize("sql, expected", [
    ("INSERT INTO \"t\" (a, [b]) VALUES (1, 'x''y'), (-2.5e3, NULL) , (X'0aff', +7)",
     ('INSERT INTO "t" (a, [b]) VALUES (?, ?)', [(1, "x'y"), (-2500.0, None), (b"\n\xff", 7)])),
    ("INSERT INTO t VALUES ('a)(', 'b'), /* a comment */ ('c', - 4)",  # read token by token: the same values
     ("INSERT INTO t VALUES (?, ?)", [("a)(", "b"), ("c", -4)])),
    ("INSERT INTO t VALUES (1, 'a'), (2)", None),  # rows of different widths: SQLite's error, as it runs
    ("INSERT INTO t VALUES (1, 2), (3, lower('a'))", None),
    ("INSERT INTO t VALUES (1, 2), (3, 4) ON CONFLICT DO NOTHING", None),
    ("INSERT INTO t VALUES (99999999999999999999, 2), (1, 2)", None),  # past 64 bits: SQLite makes it REAL
    ("INSERT INTO t VALUES (X'abc', 2), (1, 2)", None),
])
def test_literal_rows_are_read_as_sqlite_reads_them(sql: str, expected: Any) -> None:
    from memory_sim.local.d1.literal_rows import literal_insert

    assert literal_insert(sql) == expected
