"""json_each / json_tree on every engine: with bound parameters, as the memory system's decay job uses them (one
UPDATE ... FROM json_each(?) for many rows), and with SQLite's answers column by column and type by type (key,
value, type, atom, id, parent, fullkey, path; typeof(), comparisons, ORDER BY, stored values), compared with
sqlite3's own. The hidden columns json and root are refused on the DuckDB engine."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from memory_sim.bindings.d1 import D1Database
from memory_sim.errors import D1Error
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase


def test_update_from_json_each_binds_every_parameter(db: D1Database) -> None:
    db.exec("CREATE TABLE m (id TEXT PRIMARY KEY, factor REAL, day INTEGER)")
    db.batch([db.prepare("INSERT INTO m VALUES (?, ?, ?)").bind(i, 0.05, 0) for i in ("a", "b", "c")])
    pairs = json.dumps({"a": 0.5, "c": 0.25})
    done = db.prepare("UPDATE m SET factor = j.value, day = ? FROM json_each(?) AS j WHERE m.id = j.key").bind(
        7, pairs).run()
    assert done.meta.changes == 2
    rows = db.prepare("SELECT id, factor, day FROM m ORDER BY id").all().results
    assert rows == [{"id": "a", "factor": 0.5, "day": 7}, {"id": "b", "factor": 0.05, "day": 0},
                    {"id": "c", "factor": 0.25, "day": 7}]


def test_values_of_every_type_written_from_json_each_are_stored_as_sqlite_stores_them(db: D1Database) -> None:
    # A value already of the column's type is kept as it is; the others are converted by the column's affinity.
    db.exec("CREATE TABLE t (id TEXT PRIMARY KEY, r REAL, i INTEGER, s TEXT)")
    values = {"a": 0.5, "b": 3, "c": "4.5", "d": "7"}
    db.batch([db.prepare("INSERT INTO t (id) VALUES (?)").bind(k) for k in values])
    for column in ("r", "i", "s"):
        db.prepare(f"UPDATE t SET {column} = j.value FROM json_each(?) AS j WHERE t.id = j.key"
                   ).bind(json.dumps({k: v for k, v in values.items() if column != "i" or k in ("b", "d")})).run()
    rows = db.prepare("SELECT id, r, typeof(r) AS tr, i, typeof(i) AS ti, s, typeof(s) AS ts FROM t ORDER BY id"
                      ).all().results
    assert [(r["r"], r["tr"], r["i"], r["ti"], r["s"], r["ts"]) for r in rows] == [
        (0.5, "real", None, "null", "0.5", "text"),  # no REAL into INTEGER: SQLite keeps it REAL, DuckDB refuses
        (3.0, "real", 3, "integer", "3", "text"),
        (4.5, "real", None, "null", "4.5", "text"),
        (7.0, "real", 7, "integer", "7", "text"),
    ]


def test_select_from_json_each_with_a_parameter(db: D1Database) -> None:
    rows = db.prepare("SELECT j.key, j.value FROM json_each(?) AS j ORDER BY j.key").bind(
        json.dumps({"x": 1.5, "y": "text"})).all().results
    assert rows == [{"key": "x", "value": 1.5}, {"key": "y", "value": "text"}]


# --- json_each / json_tree answer as SQLite's own, column by column and type by type ---------------------------
DOC = json.dumps({"a": 1, "b": 2.5, "c": None, "d": True, "e": False, "f": "3", "g": [1, "2", [3]],
                  "h": {"x": {"y": None}}, "big": 12345678901234567890, "min": -9223372036854775808,
                  "s": "x\u00e9\"y", "1": "one", "a.b": 0})
ARRAY = '[10, "10", 1.0, null, true, [], {}, -0.0, "0", 9007199254740993]'
SETUP = ("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, doc TEXT, n REAL)",
         "INSERT INTO t VALUES (0, '0', '[1,2]', 1.0), (1, 'a', '{\"k\":\"v\"}', 2.5), (2, 'b', NULL, 10.0), "
         "(3, '10', '[\"x\", 3]', 0)",
         "CREATE TABLE kv (k TEXT, path TEXT)", "INSERT INTO kv VALUES ('a', '$'), ('b', '$.x')")
ALL = "key, value, type, atom, id, parent, fullkey, path, typeof(key), typeof(value), typeof(atom)"
CASES = [
    (f"SELECT {ALL} FROM json_each(?)", [DOC]),
    (f"SELECT {ALL} FROM json_each(?)", [ARRAY]),
    (f"SELECT {ALL} FROM json_tree(?)", [DOC]),
    (f"SELECT {ALL} FROM json_tree(?, '$.g')", [DOC]),
    ("SELECT * FROM json_each(?, '$.h')", [DOC]),
    ("SELECT * FROM json_each(?)", ["5"]),
    ("SELECT * FROM json_each(?)", [5]),
    ("SELECT * FROM json_each(?)", [None]),
    ("SELECT * FROM json_each('[1,2]', ?)", ["$[1]"]),
    ("SELECT key FROM json_each(?) WHERE value > 1 ORDER BY key", [DOC]),
    ("SELECT key, value FROM json_each(?) ORDER BY value, key", [DOC]),
    ("SELECT key, value FROM json_each(?) ORDER BY key DESC", [ARRAY]),
    ("SELECT key FROM json_each(?) WHERE key = 1", [ARRAY]),
    ("SELECT key FROM json_each(?) WHERE key = '1'", [ARRAY]),
    ("SELECT key FROM json_each(?) WHERE value = '10'", [ARRAY]),
    ("SELECT key FROM json_each(?) WHERE value = 10", [ARRAY]),
    ("SELECT key FROM json_each(?) WHERE value IS NULL OR atom IS NULL", [ARRAY]),
    ("SELECT key, value = '10', '10' = value, key = 'a', value = ? FROM json_each(?)", ["3", ARRAY]),
    ("SELECT key, value = '3', key = 'a', value = ? FROM json_each(?)", [None, DOC]),
    ("SELECT t.id, j.key FROM t JOIN json_each(?) AS j ON t.id = j.key ORDER BY 1", [ARRAY]),
    ("SELECT t.id, j.key FROM t JOIN json_each(?) AS j ON t.name = j.value ORDER BY 1, 2", [ARRAY]),
    ("SELECT t.id, j.key FROM t JOIN json_each(?) AS j ON t.name = j.key ORDER BY 1, 2", [ARRAY]),
    ("SELECT t.id, j.key FROM t JOIN json_each(?) AS j ON t.n = j.value ORDER BY 1, 2", [ARRAY]),
    ("SELECT t.id, j.key, j.value FROM t, json_each(t.doc) AS j ORDER BY 1, 2", []),
    ("SELECT t.id, json_each.value FROM t, json_each(t.doc) ORDER BY 1, 2", []),
    ("SELECT (SELECT count(*) FROM json_each(t.doc)) FROM t ORDER BY id", []),
    ("SELECT type, count(*) FROM json_each(?) GROUP BY type ORDER BY type", [DOC]),
    ("SELECT value + 1, value || 'x', -value, CAST(value AS INTEGER), CAST(key AS TEXT) FROM json_each(?)", [ARRAY]),
    ("SELECT key, value FROM json_each(?) WHERE value LIKE '1%'", [ARRAY]),
    ("WITH x AS (SELECT key, value FROM json_each(?)) SELECT * FROM x WHERE value > 0", [ARRAY]),
    ("SELECT a.key, b.key FROM json_each(?) a JOIN json_each('[\"1\",\"2\"]') b ON a.key = b.value", [ARRAY]),
    # statements naming a few columns: only those are asked for, the rows and their types unchanged
    ("SELECT 1 FROM json_each(?)", [DOC]),
    ("SELECT count(id) FROM json_tree(?)", [DOC]),
    ("SELECT atom, typeof(atom) FROM json_each(?)", [ARRAY]),
    ("SELECT \"FullKey\", [path] FROM json_tree(?) WHERE parent IS NOT NULL", [DOC]),
    ("SELECT j.* FROM json_each(?) AS j", [ARRAY]),
    ("SELECT t.name FROM t NATURAL JOIN json_each(?) ORDER BY 1", [ARRAY]),
    ("SELECT k FROM kv NATURAL JOIN json_each(?) ORDER BY 1", [DOC]),  # joined on path, named nowhere
]


def _typed(rows: list[dict[str, Any]]) -> list[dict[str, tuple[str, Any]]]:
    """Rows with each value's Python type beside it: 1 and 1.0 (and -0.0 and 0.0) compare equal otherwise."""
    return [{k: (type(v).__name__, repr(v)) for k, v in row.items()} for row in rows]


def _sqlite_answer(sql: str, args: list[Any]) -> list[dict[str, Any]]:
    conn = sqlite3.connect(":memory:")
    for statement in SETUP:
        conn.execute(statement)
    cursor = conn.execute(sql, args)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


@pytest.mark.parametrize("sql, args", CASES, ids=[f"{n}:{c[0][:40]}" for n, c in enumerate(CASES)])
def test_json_each_and_json_tree_answer_as_sqlite(db: D1Database, sql: str, args: list[Any]) -> None:
    db.batch([db.prepare(statement) for statement in SETUP])
    got = db.prepare(sql).bind(*args).all().results
    assert _typed(got) == _typed(_sqlite_answer(sql, args))


def test_rows_from_json_keep_their_types_when_stored(db: D1Database) -> None:
    db.exec("CREATE TABLE m (id INTEGER PRIMARY KEY, name TEXT, f REAL)")
    done = db.prepare("INSERT INTO m (id, name, f) SELECT key, value, value FROM json_each(?)").bind(
        '[1, "2", 3.5, null]').run()
    assert done.meta.changes == 4
    rows = db.prepare("SELECT id, name, typeof(name) AS tn, f, typeof(f) AS tf FROM m ORDER BY id").all().results
    assert _typed(rows) == _typed([
        {"id": 0, "name": "1", "tn": "text", "f": 1.0, "tf": "real"},
        {"id": 1, "name": "2", "tn": "text", "f": 2.0, "tf": "real"},
        {"id": 2, "name": "3.5", "tn": "text", "f": 3.5, "tf": "real"},
        {"id": 3, "name": None, "tn": "null", "f": None, "tf": "null"},
    ])


def test_malformed_json_is_sqlites_error(db: D1Database) -> None:
    with pytest.raises(D1Error, match="malformed JSON"):
        db.prepare("SELECT * FROM json_each(?)").bind("not json").all()


def test_hidden_columns_are_refused_on_duckdb_with_the_alternative() -> None:
    assert _sqlite_answer("SELECT j.root, json FROM json_each(?) j", ["[1]"]) == [{"root": "$", "json": "[1]"}]
    db = DuckDBDatabase()
    try:
        for sql in ("SELECT j.root FROM json_each(?) j", "SELECT json FROM json_tree(?)"):
            with pytest.raises(D1Error, match=r"hidden column (root|json) of json_(each|tree)\(\).*select the JSON"):
                db.prepare(sql).bind("[1]").all()
    finally:
        db.close()


def test_insert_select_stores_values_of_mixed_type_as_they_are(db: D1Database) -> None:
    db.exec("CREATE TABLE a (n NUMERIC)")
    db.exec("INSERT INTO a VALUES (1), ('x'), (2.5), (NULL)")
    db.exec("CREATE TABLE b (n NUMERIC, s TEXT)")
    assert db.prepare("INSERT INTO b SELECT n, n FROM a").run().meta.changes == 4
    rows = db.prepare("SELECT n, typeof(n) AS tn, s FROM b ORDER BY s").all().results
    assert _typed(rows) == _typed([{"n": None, "tn": "null", "s": None}, {"n": 1, "tn": "integer", "s": "1"},
                                   {"n": 2.5, "tn": "real", "s": "2.5"}, {"n": "x", "tn": "text", "s": "x"}])


def test_a_statement_is_handed_only_the_json_columns_it_names() -> None:
    from memory_sim.bindings.d1_sql import tokenize
    from memory_sim.local.d1.dialect import json_table

    def named(sql: str) -> set[str]:
        return set(json_table.named_columns(tokenize(sql)))

    every = {"key", "value", "type", "atom", "id", "parent", "fullkey", "path"}
    assert named("UPDATE m SET f = j.value, d = ? FROM json_each(?) AS j WHERE m.id = j.key") == {"key", "value", "id"}
    assert named('SELECT "Type", [fullkey], `atom` FROM json_tree(?)') == {"type", "fullkey", "atom"}
    assert named("SELECT 'key', 1 FROM json_each(?)") == set()  # a string is not a name
    assert named("SELECT count(*) FROM json_each(?)") == named("SELECT j.* FROM json_each(?) j") == every
    assert named("SELECT k FROM kv NATURAL JOIN json_each(?)") == every
    doc = '{"a": 0.5, "b": 2}'
    got = json_table.rows("json_each", doc, read="id,key,value")
    ids = [row["id"] for row in _sqlite_answer("SELECT id FROM json_each(?)", [doc])]
    assert (got["ks"], got["vf"], got["vi"], got["id"]) == (["a", "b"], [0.5, None], [None, 2], ids)
    assert got["ki"] == got["vs"] == got["type"] == got["fullkey"] == got["path"] == []  # all NULL or not asked
