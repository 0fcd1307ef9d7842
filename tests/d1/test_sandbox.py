"""D1 SQL never reaches a file outside its database, nor the DuckDB engine's own bookkeeping, on either engine:
the issue's reproduction through the CLI, each denied construct, a tampered DDL ledger, and a differential
property test of generated attacks (the server's side is in test_sandbox_server.py)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sandbox_attacks import make_bystanders, quote, replayed_ddl, snapshot, statements

from memory_sim.errors import D1Error
from memory_sim.local.d1.account import D1Account
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.duckdb_sandbox import _check_as_duckdb_reads_it, _nothing_to_refuse, check_duckdb_text
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

ENGINES = ["duckdb", "sqlite"]
CLI = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def test_the_issue_reproduction_through_the_cli_reaches_no_file(tmp_path: Path) -> None:
    data, target = tmp_path / "X", tmp_path / "elsewhere" / "p.db"
    target.parent.mkdir()
    assert _cli("--data", str(data), "d1", "create", "t").returncode == 0
    planted = (f"INSERT INTO __sq_ddl VALUES (100000,{quote(f'ATTACH DATABASE {quote(str(target))} AS pw')}); "
               "INSERT INTO __sq_ddl VALUES (100001,'CREATE TABLE pw.t AS SELECT 1 AS x')")
    refused = _cli("--data", str(data), "d1", "execute", "t", "--command", planted)
    after = _cli("--data", str(data), "d1", "execute", "t", "--command", "SELECT 1")
    assert not target.exists() and list(target.parent.iterdir()) == []
    assert refused.returncode != 0 and "D1_ERROR: no such table: __sq_ddl: SQLITE_ERROR" in refused.stderr
    assert after.returncode == 0, after.stderr


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("sql", [
    "ATTACH DATABASE '{out}/a.db' AS a", "VACUUM INTO '{out}/v.db'", "SELECT load_extension('{out}/x')",
    "PRAGMA writable_schema = 1", "PRAGMA writable_schema(1)", "PRAGMA temp_store_directory = '{out}'",
    "SELECT fts3_tokenizer('simple')",
])
def test_denied_constructs_are_refused_on_both_engines(tmp_path: Path, engine: str, sql: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    db = D1Account(tmp_path / "data", engine=engine).create("db")  # type: ignore[arg-type]
    db.prepare("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)").run()
    with pytest.raises(D1Error) as refused:
        db.prepare(sql.format(out=out)).all()
    assert str(refused.value).startswith("D1_ERROR: ")
    db.prepare("INSERT INTO t (v) VALUES ('still works')").run()
    db.close()
    assert list(out.iterdir()) == []


def test_sqlite_engine_denials_use_sqlites_words(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "db.sqlite")
    for sql in ("ATTACH DATABASE 'a.db' AS a", "PRAGMA writable_schema = 1", "PRAGMA database_list"):
        with pytest.raises(D1Error, match=r"^D1_ERROR: not authorized: SQLITE_AUTH$"):
            db.prepare(sql).all()
    with pytest.raises(D1Error, match="SQLITE_AUTH$"):
        db.prepare(f"VACUUM INTO '{tmp_path / 'v.db'}'").all()
    assert db.prepare("PRAGMA foreign_keys").first("foreign_keys") == 1  # D1's own PRAGMAs still answer
    db.close()


THREADS_SHARING_ONE_DATABASE = """
import threading
from memory_sim.local.d1.sqlite_engine import SqliteDatabase
db = SqliteDatabase()
db.prepare("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)").run()
def work(k):
    for i in range(300):  # new SQL text each time: SQLite compiles it, asking the authorizer (which needs the GIL)
        db.prepare(f"SELECT {k * 1000 + i} AS n, count(*) FROM t").all()
        db.prepare("INSERT INTO t (v) VALUES (?)").bind(f"{k}-{i}").run()
threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(db.prepare("SELECT count(*) AS n FROM t").first("n"))
"""


def test_threads_sharing_a_database_under_the_authorizer_do_not_deadlock() -> None:
    """A thread compiling a statement holds the connection while the authorizer waits for the GIL: every use of
    the connection, size_after included, must be under the database's lock. In a subprocess: a deadlock holds
    the GIL, so only a process boundary can time it out."""
    done = subprocess.run([sys.executable, "-c", THREADS_SHARING_ONE_DATABASE], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "2400", done.stderr


INTERNAL_SPELLINGS = [
    "SELECT * FROM __sq_ddl", 'SELECT * FROM "__SQ_DDL"', "SELECT * FROM main.__sq_ddl", "SELECT * FROM `__sq_ddl`",
    "SELECT * FROM [__sq_ddl]", "SELECT * FROM '__sq_ddl'", "SELECT * FROM db.main.__sq_ddl",
    "INSERT INTO __sq_ddl VALUES (9, 'CREATE TABLE x (a TEXT)')", "UPDATE __sq_sequence SET seq = 0",
    "DELETE FROM '__sq_ddl'", "DROP TABLE __sq_ddl", "CREATE VIEW peek AS SELECT * FROM __sq_ddl",
    "SELECT 1 FROM t WHERE EXISTS (SELECT 1 FROM t, '__sq_sequence')",
]
CATALOG_PEEKS = [
    "SELECT * FROM query_table('__sq_ddl')", "SELECT * FROM query('SELECT * FROM __sq_' || 'ddl')",
    "SELECT * FROM duckdb_tables()", "SELECT table_name FROM duckdb_tables", "SELECT * FROM information_schema.tables",
    "SELECT relname FROM pg_class", "SELECT * FROM 'duckdb_tables'",
    "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT * FROM __sq_' || 'ddl'))",
    "SELECT * FROM (SHOW TABLES)", "SHOW TABLES", "SELECT * FROM read_duckdb('db.duckdb')", "FROM t",
    "SELECT 1; SELECT * FROM t", "SELECT E'\\'' , (SELECT count(*) FROM __sq_ddl) , ''",
    "SELECT $$'$$, (SELECT count(*) FROM __sq_ddl), '$$'", "COPY t TO 'x.csv'", "EXPORT DATABASE 'x'",
    "CALL pragma_show('t')",
]


@pytest.mark.parametrize("sql", INTERNAL_SPELLINGS + CATALOG_PEEKS)
def test_duckdb_bookkeeping_and_catalog_are_out_of_reach(tmp_path: Path, sql: str) -> None:
    db = DuckDBDatabase(tmp_path / "db.duckdb")
    db.prepare("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)").run()
    with pytest.raises(D1Error) as refused:
        db.prepare(sql).all()
    if sql in INTERNAL_SPELLINGS:
        assert "no such table: __sq_" in str(refused.value).lower()
    db.close()
    ledger = duckdb.connect(str(tmp_path / "db.duckdb"), read_only=True)
    rows = ledger.execute("SELECT seq, sql FROM __sq_ddl").fetchall()
    assert rows == [(1, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")]
    ledger.close()


@pytest.mark.parametrize("engine", ENGINES)
def test_strings_and_names_that_merely_look_internal_still_work(tmp_path: Path, engine: str) -> None:
    db = D1Account(tmp_path, engine=engine).create("db")  # type: ignore[arg-type]
    db.exec("CREATE TABLE summary (id INTEGER PRIMARY KEY, body TEXT)\nCREATE TABLE query (q TEXT)")
    for body in ("__sq_ddl", "pg_class", "ATTACH DATABASE 'x' AS y", "-- VACUUM INTO 'v'"):
        db.prepare("INSERT INTO summary (body) VALUES (?)").bind(body).run()
        db.prepare(f"INSERT INTO summary (body) VALUES ({quote(body)})").run()
    db.prepare("INSERT INTO query (q) VALUES ('__sq_sequence')").run()
    bodies = db.prepare("SELECT body FROM summary WHERE body IN ('__sq_ddl', 'pg_class') ORDER BY id").raw()
    assert bodies == [["__sq_ddl"], ["__sq_ddl"], ["pg_class"], ["pg_class"]]
    assert db.prepare("SELECT q FROM query").first("q") == "__sq_sequence"
    assert db.prepare("SELECT 1 AS one --\r, 2 AS two").all().results == [{"one": 1}]  # SQLite: a comment to \n
    db.close()


def test_duckdb_sandbox_reads_duckdb_sql_as_duckdb_does() -> None:
    """The second check alone, on DuckDB text whose strings and comments a SQLite scan would misread."""
    for sql in ("SELECT E'\\'' , (SELECT count(*) FROM __sq_ddl) , ''", "SELECT $$'$$, (SELECT 1 FROM __sq_ddl), '$$'",
                "SELECT 1 --\r, (SELECT count(*) FROM __sq_ddl)", "SELECT 1 /* /* */ */ , (SELECT 1 FROM __sq_ddl)",
                "SELECT 1 --\r; SELECT * FROM t", "SELECT * FROM t, '__sq_sequence'"):
        with pytest.raises(D1Error):
            check_duckdb_text(sql)
    check_duckdb_text("INSERT INTO t VALUES (1, '__sq_ddl'), (2, 'pg_class')")  # data, not names
    check_duckdb_text("SELECT 1 /* /* */ , (SELECT 1 FROM __sq_ddl) */")  # DuckDB nests comments: all comment


def test_duckdb_mirror_replays_no_tampered_ledger(tmp_path: Path) -> None:
    """The ledger is a table in a user's file: whatever was written into it out of band, opening replays DDL only."""
    by = make_bystanders(tmp_path / "root")
    path = tmp_path / "root" / "d1" / "db.duckdb"
    path.parent.mkdir()
    first = DuckDBDatabase(path)
    first.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    first.close()
    before = snapshot(by.root, path)
    raw = duckdb.connect(str(path))
    for n, statement in enumerate(replayed_ddl(by), start=100):
        raw.execute("INSERT INTO __sq_ddl VALUES (?, ?)", [n, statement])
    raw.close()
    db = DuckDBDatabase(path)
    assert [r["name"] for r in db.prepare("SELECT name FROM sqlite_master").all().results] == ["notes"]
    assert db.prepare("PRAGMA table_info(notes)").raw()[1][1] == "body"
    db.close()
    assert snapshot(by.root, path) == before


def test_duckdb_views_kept_from_before_the_sandbox_cannot_read_its_tables(tmp_path: Path) -> None:
    path = tmp_path / "db.duckdb"
    first = DuckDBDatabase(path)
    first.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)\nCREATE VIEW fine AS SELECT body FROM notes")
    first.close()
    raw = duckdb.connect(str(path))  # what the old engine let user SQL create
    planted = ["CREATE VIEW peek AS SELECT * FROM __sq_ddl",
               "CREATE VIEW peek2 AS SELECT * FROM query_table('__sq_ddl')", "CREATE VIEW peek3 AS SELECT * FROM peek2"]
    for n, view in enumerate(planted, start=3):
        raw.execute(view)
        raw.execute("INSERT INTO __sq_ddl VALUES (?, ?)", [n, view])
    raw.close()
    db = DuckDBDatabase(path)
    for view in ("peek", "peek2", "peek3"):
        with pytest.raises(D1Error, match=f"no such table: {view}:|name {view} does not exist"):  # dropped on open
            db.prepare(f"SELECT * FROM {view}").all()
    assert db.prepare("SELECT count(*) AS n FROM fine").first("n") == 0
    assert db.prepare("SELECT name FROM sqlite_master ORDER BY name").raw() == [["fine"], ["notes"]]
    db.close()


@pytest.mark.parametrize("engine", ENGINES)
def test_duckdb_schema_functions_are_answered_by_the_mirror(engine: str) -> None:
    db = DuckDBDatabase() if engine == "duckdb" else SqliteDatabase()
    db.prepare("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)").run()
    info = db.prepare("SELECT name, pk FROM pragma_table_info('t') ORDER BY cid").raw()
    assert info == [["id", 1], ["v", 0]]
    assert db.prepare("SELECT count(*) AS n FROM pragma_table_info('__sq_ddl')").first("n") == 0
    db.close()


# --- the differential property test ---------------------------------------------------------------------------
class Attacked:
    """A database under attack among bystanders, reopened now and then (the DuckDB mirror replays on open)."""

    def __init__(self, root: Path, engine: str) -> None:
        self.by = make_bystanders(root)
        self.account = D1Account(root / "account", engine=engine)  # type: ignore[arg-type]
        second = self.account.create("second")
        second.exec("CREATE TABLE kept (id INTEGER PRIMARY KEY, v TEXT)\nINSERT INTO kept (v) VALUES ('untouched')")
        second.close()
        self.db = self.account.create("attacked")
        self.db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        self.own = self.account.path("attacked")
        self.before = snapshot(root, self.own)

    def reopen(self) -> None:
        self.db.close()
        self.db = self.account.get("attacked")


@pytest.fixture(scope="module", params=ENGINES)
def attacked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Attacked]:
    target = Attacked(tmp_path_factory.mktemp(f"sandbox-{request.param}"), request.param)
    yield target
    target.db.close()


def _run(db: Any, sqls: list[str], whole: bool) -> None:
    """As one statement (`;` and all), or as a batch with a failing DDL batch after it (a rollback rebuilds the
    DuckDB mirror); only D1's errors may come out."""
    try:
        if whole:
            db.prepare("; ".join(sqls)).all()
        else:
            db.batch([db.prepare(sql) for sql in sqls])
    except D1Error:
        pass
    with pytest.raises(D1Error):
        db.batch([db.prepare("CREATE TABLE IF NOT EXISTS replay (a TEXT)"), db.prepare("SELECT * FROM nowhere")])


def _ledger_is_the_engines(path: Path) -> None:
    conn = duckdb.connect(str(path), read_only=True)
    rows = conn.execute("SELECT seq, sql FROM __sq_ddl ORDER BY seq").fetchall()
    conn.close()
    assert [seq for seq, _ in rows] == list(range(1, len(rows) + 1))
    assert all(sql.lstrip().split()[0].upper() in ("CREATE", "ALTER", "DROP") for _, sql in rows), rows


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_generated_attacks_reach_no_file_and_no_other_database(attacked: Attacked, data: st.DataObject) -> None:
    sqls = data.draw(statements(attacked.by), label="statements")
    _run(attacked.db, sqls, whole=data.draw(st.booleans(), label="as one statement"))
    if data.draw(st.sampled_from([False, False, False, True]), label="reopen"):
        attacked.reopen()
        if attacked.account.engine == "duckdb":
            attacked.db.close()
            _ledger_is_the_engines(attacked.own)
            attacked.db = attacked.account.get("attacked")
    assert snapshot(attacked.by.root, attacked.own) == attacked.before
    assert attacked.db.prepare("SELECT count(*) AS n FROM notes").first("n") >= 0
    with sqlite3.connect(attacked.by.victim) as victim:
        assert victim.execute("SELECT value FROM secret").fetchall() == [("another account's data",)]
    victim.close()


# --- the shortcut: texts no rule can refuse are not parsed -----------------------------------------------------
REFUSED_DUCKDB_TEXTS = [
    "SELECT * FROM duckdb_tables()", 'SELECT * FROM "duckdb_tables"', "SELECT * FROM \"DUCKDB_TABLES\"",
    "SELECT * FROM duc\u212adb_tables", "SELECT 1e5duckdb_tables", "SELECT * FROM t, '__sq_sequence'",
    "SELECT * FROM '__SQ_DDL'", "UPDATE EXTENSIONS", "update extensions (x)", "SELECT 1; SELECT 2",
    "SELECT current_setting('x')", "SELECT * FROM (SHOW TABLES)", "PRAGMA version", "SET x = 1",
    "/* */ SELECT * FROM __sq_ddl", " CALL pragma_show('t')", "SELECT * FROM information_schema.tables",
    "INSERT INTO t SELECT * FROM query('SELECT 1')", "DELETE FROM t WHERE x IN (SELECT 1 FROM pg_class)",
    "UPDATE t SET v = (SELECT count(*) FROM __sq_ddl)", "SELECT * FROM read_csv('x.csv')",
    "SELECT E'\\'' , (SELECT count(*) FROM __sq_ddl) , ''", "SELECT 1 --\r; SELECT * FROM t",
]


@pytest.mark.parametrize("sql", REFUSED_DUCKDB_TEXTS)
def test_duckdb_texts_a_rule_refuses_are_never_taken_for_plain(sql: str) -> None:
    with pytest.raises(D1Error):
        _check_as_duckdb_reads_it(sql)
    assert not _nothing_to_refuse(sql)
    with pytest.raises(D1Error):
        check_duckdb_text(sql)


@pytest.mark.parametrize("sql", [
    "SELECT a, CAST(b AS VARCHAR) FROM t1 WHERE c > $1 ORDER BY 1", "INSERT INTO t (a) VALUES ('x''y')",
    "UPDATE t SET a = __sq_int(b) WHERE c IS NULL", "DELETE FROM t WHERE a = 'pg class'",
])
def test_plain_duckdb_texts_skip_the_parse_and_pass(sql: str) -> None:
    assert _nothing_to_refuse(sql)
    _check_as_duckdb_reads_it(sql)  # the full check agrees


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from([
    "SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "WITH", "*", "FROM", "t", ",", "(", ")", ";", "'", '"', "$$",
    "E'", "--", "\r", "\n", "/*", "*/", " ", "__sq_ddl", "duckdb_tables", "query", "read_csv", "show", "pivot",
    "extensions", "current_setting", "x", "1", "1e5", "Ü", "\u212a",
]), max_size=14))
def test_the_shortcut_never_passes_what_duckdbs_reading_refuses(pieces: list[str]) -> None:
    sql = "".join(pieces)
    try:
        _check_as_duckdb_reads_it(sql)
    except D1Error:
        assert not _nothing_to_refuse(sql), sql
