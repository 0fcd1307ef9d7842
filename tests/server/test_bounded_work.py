"""Bounded work per request: a 413 at the door for an oversized body on every route, D1's 2,000,000-byte limit on
computed values (both engines, SQLite's words), a per-database size cap, embedding inputs cut before they are
tokenised, exports capped per account as uploads are, and a failed import that frees its upload's slot and file."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_sim.errors import D1Error
from memory_sim.local.ai.local_ai import CHARS_PER_TOKEN_BOUND, cut_to_window
from memory_sim.local.d1.core import D1CoreDatabase
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase
from memory_sim.server.transfers import Transfers
from memory_sim.testing import TEST_TOKEN, ServerForTests
from tests.server.server_helpers import api_routes

AUTH = {"Authorization": f"Bearer {TEST_TOKEN}"}
CAP = 10_000
TOO_BIG = "string or blob too big: SQLITE_TOOBIG"
ENGINES = {"sqlite": SqliteDatabase, "duckdb": DuckDBDatabase}


@pytest.fixture(scope="module")
def capped() -> Iterator[ServerForTests]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder, ServerForTests(folder, max_body_bytes=CAP) as running:
        yield running


# --- 413 at the door --------------------------------------------------------------------------------------------
def _filled(template: str, account: str) -> str:
    path = template.replace("/client/v4", "").replace("{account_id}", account)
    for name in ("{name}", "{database_id}", "{model}", "{model:path}", "{index_name}", "{property_name}"):
        path = path.replace(name, "x")
    return path


def test_every_route_refuses_an_announced_oversized_body_before_reading_it(capped: ServerForTests) -> None:
    account = capped.fresh_account_id()
    routes = [(m, p) for m, p in api_routes(capped.app) if m in ("POST", "PUT", "PATCH")]
    assert len(routes) > 15
    extra = [("POST", "/remote-proxy/{account_id}/ai"), ("POST", "/remote-proxy/{account_id}/d1/x")]
    root = capped.base_url.removesuffix("/client/v4")
    for method, template in routes + extra:
        url = (capped.base_url + _filled(template, account)) if template.startswith("/client") else \
            root + template.replace("{account_id}", account)
        answer = httpx.request(method, url, content=b"{" + b" " * CAP + b"}", headers=AUTH, timeout=30)
        assert answer.status_code == 413, (method, template, answer.text[:200])
        assert "Request Entity Too Large" in answer.json()["errors"][0]["message"]


@pytest.mark.parametrize("route", ["/accounts/{a}/d1/database", "/accounts/{a}/ai/v1/embeddings",
                                   "/accounts/{a}/ai/run/sentence-transformers/all-MiniLM-L6-v2"])
def test_a_body_without_a_length_is_cut_off_once_past_the_cap(capped: ServerForTests, route: str) -> None:
    account = capped.fresh_account_id()
    chunks = iter([b'{"name": "', b"x" * 6000, b"y" * 6000, b'"}'])  # chunked: no length announced
    answer = httpx.post(capped.base_url + route.replace("{a}", account), content=chunks, headers=AUTH, timeout=30)
    assert answer.status_code == 413
    assert httpx.get(f"{capped.base_url}/accounts/{account}/d1/database", headers=AUTH).json()["result"] == []


def test_a_body_under_the_cap_is_served(capped: ServerForTests) -> None:
    account = capped.fresh_account_id()
    made = httpx.post(f"{capped.base_url}/accounts/{account}/d1/database", json={"name": "db"}, headers=AUTH)
    assert made.status_code == 200


# --- D1's limit on computed values --------------------------------------------------------------------------------
def _database(engine: str, tmp_path: Path, **options: Any) -> D1CoreDatabase:
    db: D1CoreDatabase = ENGINES[engine](tmp_path / f"db.{engine}", **options)
    db.exec("CREATE TABLE t (v TEXT)")
    return db


@pytest.mark.parametrize("engine", ENGINES)
def test_computed_values_over_two_million_bytes_fail_as_sqlite_says(engine: str, tmp_path: Path) -> None:
    db = _database(engine, tmp_path)
    for _ in range(3):
        db.prepare("INSERT INTO t VALUES (?)").bind("y" * 1_000_000).run()
    refused = [
        "SELECT group_concat(v) AS v FROM t",
        "SELECT v || v || v AS v FROM t LIMIT 1",
        "INSERT INTO t SELECT group_concat(v) FROM t",
        "UPDATE t SET v = v || v || v",
        "SELECT zeroblob(3000000) AS v",
        "WITH RECURSIVE r(s, n) AS (SELECT 'xxxxxxxxxxxxxxxx', 0 UNION ALL SELECT s || s, n + 1 FROM r WHERE n < 18) "
        "SELECT s AS v FROM r ORDER BY n DESC LIMIT 1",
    ]
    for sql in refused:
        with pytest.raises(D1Error, match=TOO_BIG):
            db.prepare(sql).all()
    # printf over the limit is NULL in SQLite (its buffer refuses to grow), not an error: both engines agree
    assert db.prepare("SELECT printf('%.*c', 200000000, 'x') AS v").first("v") is None
    assert db.prepare("SELECT length(printf('%.*c', 1999999, 'x')) AS v").first("v") == 1_999_999
    assert db.prepare("SELECT count(*) AS n, max(length(v)) AS m FROM t").all().results == [{"n": 3, "m": 1_000_000}]
    db.close()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_database_past_its_size_cap_refuses_writes_and_still_reads(engine: str, tmp_path: Path) -> None:
    db = _database(engine, tmp_path, max_bytes=3_000_000)
    written = 0
    with pytest.raises(D1Error, match="database or disk is full.*SQLITE_FULL"):
        for _ in range(400):  # 400 MB if nothing stopped it
            db.prepare("INSERT INTO t VALUES (?)").bind("z" * 1_000_000).run()
            written += 1
    assert 1 <= written <= 6
    assert db.prepare("SELECT count(*) AS n FROM t").first("n") == written
    db.close()


# --- embeddings cut before they are tokenised ---------------------------------------------------------------------
def test_a_text_is_cut_to_what_the_window_can_read() -> None:
    assert cut_to_window("short", 256) == "short"
    long = "word " * 1_000_000
    assert len(cut_to_window(long, 256)) == 256 * CHARS_PER_TOKEN_BOUND
    assert len(cut_to_window(long, None)) == 512 * CHARS_PER_TOKEN_BOUND


_RSS_CHILD = """
import json, resource, sys
from memory_sim.local.ai.local_ai import LocalAi
ai = LocalAi(runtime="onnx", threads=1)
model = "sentence-transformers/all-MiniLM-L6-v2"
head = "The miller counted the sacks of rye by the river wheel. "
ai.run(model, {"text": [head + "and then more chatter " * 300] * 10})  # a full window sizes the runtime's arena
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
long = ai.run(model, {"text": [head + "and then more chatter " * 48_000] * 10})["data"]
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"grew_mb": (after - before) / 1024, "rows": len(long)}))
"""


@pytest.mark.slow
def test_ten_one_megabyte_texts_cost_what_their_windows_do() -> None:
    """Before, each text was tokenised whole before the window's cut (100 texts of 1 MB: 277 s, +6.5 GB)."""
    done = subprocess.run([sys.executable, "-c", _RSS_CHILD], capture_output=True, text=True, timeout=300,
                          check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["rows"] == 10 and figures["grew_mb"] < 200, figures


# --- transfers: exports capped, failed imports freed ------------------------------------------------------------
def test_exports_nobody_fetches_are_capped_per_account(tmp_path: Path) -> None:
    transfers = Transfers(max_pending=2)
    try:
        first = transfers.offer_download("a", "db", "a1.sql", "x" * 1000)
        for n in range(5):
            transfers.offer_download("a", "db", f"a{n}.sql", "x" * 1000)
        transfers.offer_download("b", "db", "b.sql", "y")
        assert len(transfers.files()) == 3  # two of a's, one of b's
        with pytest.raises(Exception, match="unknown or has expired"):
            transfers.get(first, upload=False)
    finally:
        transfers.close()


@pytest.fixture
def importing(tmp_path: Path) -> Iterator[tuple[ServerForTests, Transfers]]:
    with ServerForTests(tmp_path, d1_engine="sqlite") as running:
        transfers = Transfers(max_pending=2)
        running.app.state.transfers = transfers
        yield running, transfers
        transfers.close()


def test_a_failed_import_frees_its_upload_slot_and_file(importing: tuple[ServerForTests, Transfers]) -> None:
    running, transfers = importing
    account = running.fresh_account_id()
    made = httpx.post(f"{running.base_url}/accounts/{account}/d1/database", headers=AUTH, json={"name": "db"})
    url = f"{running.base_url}/accounts/{account}/d1/database/{made.json()['result']['uuid']}/import"
    bad = b"CREATE TABLE t (a);\nINSERT INTO nowhere VALUES (1);\n"
    etag = hashlib.md5(bad).hexdigest()
    for _ in range(4):  # twice the account's cap on waiting uploads
        started = httpx.post(url, headers=AUTH, json={"action": "init", "etag": etag})
        assert started.status_code == 200, started.text
        assert httpx.put(started.json()["result"]["upload_url"], content=bad).status_code == 200
        filename = started.json()["result"]["filename"]
        ingested = httpx.post(url, headers=AUTH, json={"action": "ingest", "etag": etag, "filename": filename})
        assert ingested.json()["result"]["status"] == "error"
        assert transfers.files() == []
