"""Export for wrangler, and push to the local server acting as Cloudflare: batched, resumable, no duplicates."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memory_sim.bindings.vectorize import Vector
from memory_sim.cloudflare.vectorize import CloudflareVectorizeAccount
from memory_sim.local.d1.sqlite_engine import SqliteDatabase
from memory_sim.local.vectorize.oracle import OracleAccount
from memory_sim.transfer import Progress, export_sql, export_vectors, push


def local_side(n: int = 2500) -> tuple[OracleAccount, SqliteDatabase]:
    account = OracleAccount(max_batch=5000)
    account.create_index("memories", 2, "cosine", "model=test")
    index = account.index("memories")
    index.create_metadata_index("npcId", "string")
    index.upsert([Vector(f"m{i:05}", [1.0, i / n], {"npcId": f"npc{i % 7}"}, "village" if i % 2 else None) for i in range(n)])
    db = SqliteDatabase()
    db.exec("CREATE TABLE m (id INTEGER PRIMARY KEY, npc TEXT, note TEXT, raw BLOB)\nCREATE INDEX m_npc ON m(npc)")
    insert = db.prepare("INSERT INTO m (npc, note, raw) VALUES (?, ?, ?)")
    db.batch([insert.bind(f"npc{i % 7}", f"it's note {i}", bytes([i % 256, 0])) for i in range(450)])
    return account, db


def test_export_files_load_where_wrangler_would(tmp_path: Path) -> None:
    account, db = local_side(30)
    assert export_vectors(account.index("memories"), tmp_path / "v.ndjson") == 30
    lines = [json.loads(line) for line in (tmp_path / "v.ndjson").read_text().splitlines()]
    assert lines[1] == {"id": "m00001", "values": [1.0, pytest.approx(1 / 30)], "metadata": {"npcId": "npc1"}, "namespace": "village"}
    assert export_sql(db, tmp_path / "d.sql") == 450
    check = sqlite3.connect(":memory:")
    check.executescript((tmp_path / "d.sql").read_text())  # what `wrangler d1 execute --file` runs, on SQLite
    assert check.execute("SELECT count(*), min(note), max(hex(raw)) FROM m").fetchone() == (450, "it's note 0", "FF00")
    assert check.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall() == [("m_npc",)]


class Interrupted(Exception):
    pass


def test_push_resumes_after_an_interruption_without_duplicates(server, tmp_path: Path) -> None:
    account, db = local_side()
    target = CloudflareVectorizeAccount(server.client())
    target_db = server.new_database("memory", target.client.account_id)
    progress = tmp_path / "progress.json"

    def stop_after_two(sent: int) -> None:
        if sent >= 2000:
            raise Interrupted

    with pytest.raises(Interrupted):
        push(account, db, target, target_db, "memories", progress, batch=1000, on_batch=stop_after_two)
    assert Progress.load(progress).vectors_sent == 2000 and target.index("memories").describe().vector_count == 2000
    report = push(account, db, target, target_db, "memories", progress, batch=1000)
    assert report.vectors == 500 and report.rows == 450
    remote = target.index("memories")
    assert remote.describe().vector_count == 2500
    assert [m.property_name for m in remote.list_metadata_indexes()] == ["npcId"]
    assert remote.get_by_ids(["m00003"])[0] == account.index("memories").get_by_ids(["m00003"])[0]
    assert target.get_index("memories").description == "model=test"
    rows = target_db.prepare("SELECT count(*) AS n, count(DISTINCT id) AS ids, max(hex(raw)) AS top FROM m").first()
    assert rows == {"n": 450, "ids": 450, "top": "FF00"}
    again = push(account, db, target, target_db, "memories", progress)
    assert again.vectors == 0 and again.rows == 0  # finished: the record says so


def test_a_lost_answer_resent_leaves_no_duplicates(server, tmp_path: Path) -> None:
    account, db = local_side(40)
    target = CloudflareVectorizeAccount(server.client())
    target_db = server.new_database("memory", target.client.account_id)
    push(account, db, target, target_db, "memories", tmp_path / "first.json")
    push(account, db, target, target_db, "memories", tmp_path / "second.json")  # as if no record had been kept
    assert target.index("memories").describe().vector_count == 40
    assert target_db.prepare("SELECT count(*) AS n FROM m").first("n") == 450


def test_cli_export(tmp_path: Path) -> None:
    from memory_sim.cli import main
    from memory_sim.local.d1.account import D1Account
    from memory_sim.local.vectorize.chroma import ChromaAccount

    chroma = ChromaAccount(tmp_path / "vectorize")
    chroma.create_index("memories", 2, "cosine")
    chroma.index("memories").upsert([Vector("a", [1.0, 0.0], {"k": "v"})])
    chroma.close()
    database = D1Account(tmp_path, engine="sqlite").create("memory")
    database.exec("CREATE TABLE t (v TEXT)\nINSERT INTO t VALUES ('x')")
    database.close()
    code = main(["--data", str(tmp_path), "export", "--d1-engine", "sqlite",
                 "--vectorize-ndjson", str(tmp_path / "v.ndjson"), "--d1-sql", str(tmp_path / "d.sql")])
    assert code == 0
    assert json.loads((tmp_path / "v.ndjson").read_text()) == {"id": "a", "values": [1.0, 0.0], "metadata": {"k": "v"}}
    assert (tmp_path / "d.sql").read_text() == 'CREATE TABLE t (v TEXT);\nINSERT INTO "t" ("v") VALUES (\'x\');\n'


def test_cli_push_to_the_server(server, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memory_sim.cli import main
    from memory_sim.local.d1.account import D1Account
    from memory_sim.local.vectorize.chroma import ChromaAccount

    chroma = ChromaAccount(tmp_path / "vectorize")
    chroma.create_index("memories", 2, "cosine")
    chroma.index("memories").create_metadata_index("npcId", "string")
    chroma.index("memories").upsert([Vector(f"v{i}", [1.0, i], {"npcId": "ada"}) for i in range(7)])
    chroma.close()
    D1Account(tmp_path, engine="sqlite").create("memory").exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)\nINSERT INTO t (v) VALUES ('x')")
    account_id = server.fresh_account_id()
    code = main(["--data", str(tmp_path), "push", "--d1-engine", "sqlite", "--account-id", account_id,
                 "--api-token", "memory-sim-test-token", "--base-url", server.base_url])
    assert code == 0 and "pushed 7 vectors and 1 rows" in capsys.readouterr().out
    remote = CloudflareVectorizeAccount(server.client(account_id))
    assert remote.index("memories").describe().vector_count == 7


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_export_pages_text_keyed_tables_in_key_order_on_both_engines(tmp_path: Path, engine: str) -> None:
    """The memory tables have TEXT keys: no rowid on DuckDB, so export pages by the primary key, and rows updated
    in between (which move physically on DuckDB) are neither skipped nor repeated."""
    from memory_sim.local.d1.account import D1Account
    from memory_sim.transfer import rows_of

    db = D1Account(tmp_path, engine=engine).create("memory")
    db.exec("CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT)")
    db.batch([db.prepare("INSERT INTO notes VALUES (?, ?)").bind(f"n{i:03}", f"body {i}") for i in range(25)])
    db.prepare("UPDATE notes SET body = 'changed' WHERE id IN ('n000', 'n007')").run()
    pages = list(rows_of(db, "notes", page=10))
    ids = [row[0] for _, rows in pages for row in rows]
    assert ids == [f"n{i:03}" for i in range(25)]
    assert export_sql(db, tmp_path / "d.sql") == 25
    db.close()
