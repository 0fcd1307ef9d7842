"""D1 imports and their uploads are bounded: the file is run as it is read (never held whole), an upload has a
size cap, an account a cap on uploads waiting to be ingested, an abandoned upload goes, and a server told to stop
(SIGTERM) in the middle of an import stops, rolls it back and exits."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_sim.local.d1.sqlite_engine import SqliteDatabase
from memory_sim.server.loopback import free_port, wait_until_serving
from memory_sim.server.transfers import Transfers
from memory_sim.testing import TEST_TOKEN, ServerForTests

AUTH = {"Authorization": f"Bearer {TEST_TOKEN}"}


def test_a_script_is_run_as_it_is_read_never_more_than_a_run_ahead(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "db.sqlite")
    db.prepare("CREATE TABLE t (n INTEGER)").run()
    seen: list[int] = []

    def lines() -> Iterator[tuple[str, tuple[Any, ...]]]:
        for n in range(200):
            seen.append(db.prepare("SELECT count(*) AS c FROM t").first("c"))  # the lock is re-entrant
            yield f"INSERT INTO t VALUES ({n})", ()

    totals = db.run_script(lines(), run_length=10)
    assert all(n - 10 <= done <= n for n, done in enumerate(seen)), seen
    assert totals.statements == 200 and totals.changes == 200


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[ServerForTests, Transfers, Clock]]:
    clock = Clock()
    with ServerForTests(tmp_path, d1_engine="sqlite") as running:
        transfers = Transfers(max_upload_bytes=10_000, max_pending=2, upload_valid_s=600, clock=clock)
        running.app.state.transfers = transfers
        yield running, transfers, clock
        transfers.close()


def _init(running: ServerForTests, account: str, database: str, sql: bytes) -> httpx.Response:
    url = f"{running.base_url}/accounts/{account}/d1/database/{database}/import"
    return httpx.post(url, headers=AUTH, json={"action": "init", "etag": hashlib.md5(sql).hexdigest()})


def _database(running: ServerForTests, account: str) -> str:
    made = httpx.post(f"{running.base_url}/accounts/{account}/d1/database", headers=AUTH, json={"name": "db"})
    return str(made.json()["result"]["uuid"])


def test_an_upload_over_the_cap_is_refused_and_leaves_nothing(server: Any) -> None:
    running, transfers, _ = server
    account = running.fresh_account_id()
    database = _database(running, account)
    big = b"SELECT 1;\n" * 2000  # 20,000 bytes
    url = _init(running, account, database, big).json()["result"]["upload_url"]
    announced = httpx.put(url, content=big)
    assert announced.status_code == 413 and "over 10,000 bytes" in announced.json()["errors"][0]["message"]
    streamed = httpx.put(url, content=iter([big[:6000], big[6000:]]))  # chunked: no length announced
    assert streamed.status_code == 413
    assert transfers.files() == []


def test_an_account_has_a_cap_on_uploads_waiting_and_abandoned_ones_go(server: Any) -> None:
    running, transfers, clock = server
    account = running.fresh_account_id()
    database = _database(running, account)
    for n in range(2):
        sql = f"SELECT {n};".encode()
        assert httpx.put(_init(running, account, database, sql).json()["result"]["upload_url"],
                         content=sql).status_code == 200
    refused = _init(running, account, database, b"SELECT 3;")
    assert refused.status_code == 429
    assert "already has 2 uploads waiting to be ingested" in refused.json()["errors"][0]["message"]
    assert len(transfers.files()) == 2
    clock.now += 601  # nobody ingested them
    assert _init(running, account, database, b"SELECT 3;").status_code == 200
    assert transfers.files() == []


def test_an_upload_broken_off_leaves_no_partial_file(server: Any) -> None:
    running, transfers, _ = server
    account = running.fresh_account_id()
    database = _database(running, account)
    url = httpx.URL(_init(running, account, database, b"SELECT 1;").json()["result"]["upload_url"])
    with socket.create_connection((url.host, url.port)) as raw:
        raw.sendall(f"PUT {url.raw_path.decode()} HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n".encode()
                    + b"x" * 100)
        deadline = time.monotonic() + 30
        while not transfers.files():  # the partial file appears once the server reads the first bytes
            assert time.monotonic() < deadline
            time.sleep(0.01)
    deadline = time.monotonic() + 30
    while transfers.files():  # and goes once the server sees the client gone
        assert time.monotonic() < deadline, transfers.files()
        time.sleep(0.05)


@pytest.mark.timeout(180)
def test_sigterm_in_the_middle_of_an_import_rolls_it_back_and_stops(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}/client/v4/accounts/a/d1/database"
    command = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())",
               "--data", str(tmp_path), "serve", "--port", str(port), "--log-level", "warning"]
    env = {**os.environ, "MEMORY_SIM_API_TOKEN": TEST_TOKEN}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_until_serving(port, process)
        database = httpx.post(base, headers=AUTH, json={"name": "db"}).json()["result"]["uuid"]
        httpx.post(f"{base}/{database}/query", headers=AUTH, json={"sql": "CREATE TABLE t (n INTEGER, v TEXT)"})
        sql = "".join(f"INSERT INTO t VALUES ({n}, 'row {n}');\n" for n in range(400_000)).encode()  # DuckDB: minutes
        etag = hashlib.md5(sql).hexdigest()
        init = httpx.post(f"{base}/{database}/import", headers=AUTH, json={"action": "init", "etag": etag}).json()
        assert httpx.put(init["result"]["upload_url"], content=sql, timeout=120).status_code == 200
        answers: list[httpx.Response | Exception] = []

        def ingest() -> None:
            try:
                answers.append(httpx.post(f"{base}/{database}/import", headers=AUTH, timeout=170, json={
                    "action": "ingest", "etag": etag, "filename": init["result"]["filename"]}))
            except httpx.TransportError as exc:
                answers.append(exc)

        worker = threading.Thread(target=ingest)
        worker.start()
        time.sleep(2.0)  # the import under way (if not yet, it stops before its first statement: same verdict)
        stopped_at = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        took = time.monotonic() - stopped_at
        worker.join(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
        output = process.communicate(timeout=30)[0].decode()
    assert took < 30, (took, output)
    answer = answers[0]
    assert isinstance(answer, httpx.Response) and answer.status_code == 503, (answer, output)
    assert "rolled back" in answer.json()["errors"][0]["message"]
    again = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_until_serving(port, again)
        count = httpx.post(f"{base}/{database}/query", headers=AUTH, json={"sql": "SELECT count(*) AS c FROM t"})
        assert count.json()["result"][0]["results"] == [{"c": 0}]
    finally:
        again.terminate()
        again.communicate(timeout=30)
