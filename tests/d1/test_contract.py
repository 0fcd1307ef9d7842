"""The D1 binding contract, on both engines: results, meta, bind rules, limits, batch and exec."""

from __future__ import annotations

import threading

import pytest

from memory_sim.bindings import limits
from memory_sim.bindings.d1 import D1Database
from memory_sim.errors import D1ColumnNotFound, D1Error, D1ExecError, D1TypeError
from memory_sim.local.d1.core import D1CoreDatabase

SCHEMA = "CREATE TABLE m (id INTEGER PRIMARY KEY, npc TEXT, note TEXT, score REAL, raw BLOB)"


def test_implements_the_protocol(db: D1CoreDatabase) -> None:
    assert isinstance(db, D1Database)


def test_all_first_run_raw(db: D1CoreDatabase) -> None:
    db.prepare(SCHEMA).run()
    inserted = db.prepare("INSERT INTO m (npc, note, score) VALUES (?, ?, ?)").bind("ada", "hello", 0.5).run()
    assert inserted.success and inserted.meta.changes == 1 and inserted.meta.last_row_id == 1
    assert inserted.meta.changed_db and inserted.meta.rows_written == 1
    assert db.prepare("SELECT npc, note FROM m").all().results == [{"npc": "ada", "note": "hello"}]
    assert db.prepare("SELECT note FROM m WHERE npc = ?1").bind("ada").first("note") == "hello"
    assert db.prepare("SELECT * FROM m WHERE npc = 'nobody'").first() is None
    assert db.prepare("SELECT npc, score FROM m").raw(column_names=True) == [["npc", "score"], ["ada", 0.5]]
    assert db.prepare("SELECT npc FROM m").raw() == [["ada"]]


def test_first_on_a_missing_column(db: D1CoreDatabase) -> None:
    db.prepare(SCHEMA).run()
    db.prepare("INSERT INTO m (npc) VALUES ('ada')").run()
    with pytest.raises(D1ColumnNotFound, match=r"^D1_COLUMN_NOTFOUND: Column not found \(age\)$"):
        db.prepare("SELECT npc FROM m").first("age")
    assert db.prepare("SELECT npc FROM m WHERE 0").first("age") is None  # no rows: null, not an error


def test_type_mapping(db: D1CoreDatabase) -> None:
    db.prepare(SCHEMA).run()
    db.prepare("INSERT INTO m (npc, note, score, raw) VALUES (?, ?, ?, ?)").bind(True, None, 2, b"\x00\xff").run()
    row = db.prepare("SELECT npc, note, score, raw, typeof(raw) AS t FROM m").first()
    assert row == {"npc": "1", "note": None, "score": 2.0, "raw": [0, 255], "t": "blob"}
    assert db.prepare("SELECT ? AS b").bind(False).first("b") == 0


@pytest.mark.parametrize("value, name", [({"a": 1}, "dict"), ([1], "list"), (object(), "object"), (2**70, "bigint")])
def test_bind_rejects_unsupported_types(db: D1CoreDatabase, value: object, name: str) -> None:
    with pytest.raises(D1TypeError, match=rf"^D1_TYPE_ERROR: Type '{name}' not supported for value"):
        db.prepare("SELECT ?").bind(value)  # type: ignore[arg-type]


def test_parameters(db: D1CoreDatabase) -> None:
    assert db.prepare("SELECT ?2 AS a, ?1 AS b").bind("x", "y").first() == {"a": "y", "b": "x"}
    with pytest.raises(D1Error, match="named parameters"):
        db.prepare("SELECT :name").bind("x").all()
    with pytest.raises(D1Error, match="Wrong number of parameter bindings"):
        db.prepare("SELECT ?, ?").bind(1).all()


def test_limits(db: D1CoreDatabase) -> None:
    many = limits.D1_MAX_BOUND_PARAMETERS + 1
    with pytest.raises(D1Error, match="too many SQL variables"):
        db.prepare("SELECT " + ", ".join("?" * many)).bind(*range(many)).all()
    ok = limits.D1_MAX_BOUND_PARAMETERS
    assert len(db.prepare("SELECT " + ", ".join("?" * ok)).bind(*range(ok)).raw()[0]) == ok
    with pytest.raises(D1Error, match="statement too long"):
        db.prepare("SELECT '" + "x" * limits.D1_MAX_STATEMENT_BYTES + "'").all()
    with pytest.raises(D1Error, match="too big"):
        db.prepare("SELECT ?").bind("x" * (limits.D1_MAX_STRING_OR_BLOB_BYTES + 1))
    with pytest.raises(D1Error, match="too big"):
        db.prepare("SELECT ?").bind(b"x" * (limits.D1_MAX_STRING_OR_BLOB_BYTES + 1))


def test_batch_is_one_transaction(db: D1CoreDatabase) -> None:
    db.prepare(SCHEMA).run()
    insert = db.prepare("INSERT INTO m (npc) VALUES (?)")
    results = db.batch([insert.bind("a"), insert.bind("b"), db.prepare("SELECT count(*) AS n FROM m")])
    assert [r.meta.last_row_id for r in results[:2]] == [1, 2] and results[2].results == [{"n": 2}]
    with pytest.raises(D1Error):
        db.batch([insert.bind("c"), db.prepare("INSERT INTO nowhere VALUES (1)")])
    assert db.prepare("SELECT count(*) AS n FROM m").first("n") == 2  # "c" rolled back too


def test_batch_rolls_back_ddl(db: D1CoreDatabase) -> None:
    with pytest.raises(D1Error):
        db.batch([db.prepare("CREATE TABLE t (id INTEGER PRIMARY KEY)"), db.prepare("SELECT * FROM nowhere")])
    db.prepare("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)").run()
    assert db.prepare("INSERT INTO t (v) VALUES ('x')").run().meta.last_row_id == 1


def test_exec_splits_by_newline(db: D1CoreDatabase) -> None:
    result = db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);\nINSERT INTO t (v) VALUES ('a');\n\nINSERT INTO t (v) VALUES ('b')")
    assert result.count == 3 and result.duration >= 0
    with pytest.raises(D1ExecError, match=r"^D1_EXEC_ERROR: Error in line 2: SELECT \* FROM nowhere: "):
        db.exec("INSERT INTO t (v) VALUES ('c')\nSELECT * FROM nowhere")
    assert db.prepare("SELECT count(*) AS n FROM t").first("n") == 2


def test_sql_transactions_are_refused(db: D1CoreDatabase) -> None:
    with pytest.raises(D1Error, match="batch"):
        db.prepare("BEGIN TRANSACTION").run()


def test_threads_share_one_database(db: D1CoreDatabase) -> None:
    db.prepare("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)").run()
    insert = db.prepare("INSERT INTO t (v) VALUES (?)")

    def work(offset: int) -> None:
        for i in range(50):
            insert.bind(offset + i).run()

    threads = [threading.Thread(target=work, args=(k * 100,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert db.prepare("SELECT count(*) AS n, count(DISTINCT id) AS ids FROM t").first() == {"n": 200, "ids": 200}


# Every field of production's `meta` (cloudflare-contract.md, "Result meta"), as the binding, the REST API and the
# Cloudflare adapter return it.
META_FIELDS = {"duration", "changes", "last_row_id", "changed_db", "size_after", "rows_read", "rows_written",
               "served_by", "served_by_region", "served_by_colo", "served_by_primary", "timings", "total_attempts"}
REGIONS = {"WNAM", "ENAM", "WEUR", "EEUR", "APAC", "OC"}


def test_meta_carries_every_field_production_returns(db: D1CoreDatabase) -> None:
    db.prepare(SCHEMA).run()
    for result in (db.prepare("INSERT INTO m (npc) VALUES ('ada')").run(), db.prepare("SELECT npc FROM m").all()):
        meta = result.to_json()["meta"]
        assert set(meta) == META_FIELDS
        assert meta["served_by_region"] in REGIONS and len(meta["served_by_colo"]) == 3
        assert meta["served_by_primary"] is True and meta["total_attempts"] == 1 and meta["served_by"]
        assert meta["timings"] == {"sql_duration_ms": meta["duration"]} and meta["duration"] >= 0
    assert result.meta.rows_read == 1 and result.meta.timings["sql_duration_ms"] == result.meta.duration
