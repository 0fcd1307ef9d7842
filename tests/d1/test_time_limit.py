"""D1's time limit on a query, on both engines: a statement that would run forever is stopped with D1's words
(`D1_ERROR: D1 DB storage operation exceeded timeout which caused object to be reset.`), its writes are rolled
back, and a statement waiting on the database from another thread is answered right after. The limit is
injected (a fraction of a second here); the statements stopped never end by themselves, so no verdict depends
on the machine's speed."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memory_sim.errors import D1Error, D1TimeLimit
from memory_sim.local.d1.account import D1Account
from memory_sim.local.d1.core import D1CoreDatabase

ENGINES = ["duckdb", "sqlite"]
ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT 1 FROM r) SELECT count(*) AS n FROM r"
WORDS = "D1_ERROR: D1 DB storage operation exceeded timeout which caused object to be reset."


def _db(tmp_path: Path, engine: str, limit_s: float = 0.3) -> D1CoreDatabase:
    db = D1Account(tmp_path, engine=engine, time_limit_s=limit_s).create("t")  # type: ignore[arg-type]
    db.prepare("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)").run()
    return db


@pytest.mark.timeout(60)
@pytest.mark.parametrize("engine", ENGINES)
def test_an_endless_statement_is_stopped_with_d1s_words(tmp_path: Path, engine: str) -> None:
    db = _db(tmp_path, engine)
    with pytest.raises(D1TimeLimit) as stopped:
        db.prepare(ENDLESS).all()
    assert str(stopped.value) == WORDS
    assert db.prepare("SELECT 1 AS one").first("one") == 1


@pytest.mark.timeout(60)
@pytest.mark.parametrize("engine", ENGINES)
def test_the_limit_covers_a_whole_batch_and_rolls_it_back(tmp_path: Path, engine: str) -> None:
    db = _db(tmp_path, engine)
    with pytest.raises(D1TimeLimit):
        db.batch([db.prepare("INSERT INTO t (v) VALUES ('kept?')"), db.prepare(ENDLESS)])
    with pytest.raises(D1Error, match="exceeded timeout"):
        db.run_statements([("INSERT INTO t (v) VALUES ('kept?')", []), (ENDLESS, [])])
    with pytest.raises(D1Error, match="exceeded timeout"):
        db.exec("INSERT INTO t (v) VALUES ('kept?')\n" + ENDLESS)
    assert db.prepare("SELECT count(*) AS n FROM t").first("n") == 0
    db.prepare("INSERT INTO t (v) VALUES ('after')").run()
    assert db.prepare("SELECT v FROM t").first("v") == "after"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("engine", ENGINES)
def test_a_statement_waiting_behind_an_endless_one_is_answered(tmp_path: Path, engine: str) -> None:
    db = _db(tmp_path, engine)
    failures: list[Exception] = []

    def endless() -> None:
        try:
            db.prepare(ENDLESS).all()
        except D1Error as exc:
            failures.append(exc)

    worker = threading.Thread(target=endless)
    worker.start()
    answer = db.prepare("SELECT 1 AS one").first("one")  # waits for the lock, at most until the limit
    worker.join(timeout=30)
    assert answer == 1 and not worker.is_alive()
    assert len(failures) == 1 and isinstance(failures[0], D1TimeLimit)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_default_limit_is_d1s_30_seconds_and_ordinary_work_is_untouched(tmp_path: Path, engine: str) -> None:
    db = D1Account(tmp_path, engine=engine).create("t")  # type: ignore[arg-type]
    assert db.time_limit_s == 30.0
    db.prepare("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)").run()
    db.batch([db.prepare("INSERT INTO t (v) VALUES (?)").bind(str(i)) for i in range(500)])
    assert db.prepare("SELECT count(*) AS n FROM t").first("n") == 500
