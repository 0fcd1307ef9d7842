"""Foreign keys as D1 enforces them, on both engines: always on (`PRAGMA foreign_keys = OFF` changes nothing, D1 runs
each query in a transaction), checked at the end of each statement, or at the end of the batch after `PRAGMA
defer_foreign_keys = ON`; a failing statement or batch leaves nothing behind."""

from __future__ import annotations

from typing import Iterator

import pytest

from memory_sim.errors import D1Error, D1Unsupported
from memory_sim.local.d1.core import D1CoreDatabase
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

ENGINES = {"sqlite": SqliteDatabase, "duckdb": DuckDBDatabase}
FAILED = r"^D1_ERROR: FOREIGN KEY constraint failed: SQLITE_CONSTRAINT$"
SCHEMA = (
    "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT UNIQUE)\n"
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users(id), note TEXT)\n"
    "CREATE TABLE lines (order_id INTEGER, sku TEXT, FOREIGN KEY (order_id) REFERENCES orders(id))\n"
    "INSERT INTO users (id, name) VALUES (1, 'ada')\nINSERT INTO orders (id, user_id) VALUES (10, 1)\n"
    "INSERT INTO lines VALUES (10, 'x')"
)


@pytest.fixture(params=sorted(ENGINES))
def db(request: pytest.FixtureRequest) -> Iterator[D1CoreDatabase]:
    database = ENGINES[request.param]()
    database.exec(SCHEMA)
    yield database
    database.close()


def _count(db: D1CoreDatabase, table: str) -> int:
    return int(db.prepare(f"SELECT count(*) AS n FROM {table}").first("n"))


def test_a_row_needs_its_parent(db: D1CoreDatabase) -> None:
    for sql in ("INSERT INTO orders (user_id) VALUES (2)", "UPDATE orders SET user_id = 5",
                "INSERT INTO lines VALUES (11, 'y')"):
        with pytest.raises(D1Error, match=FAILED):
            db.prepare(sql).run()
    db.prepare("INSERT INTO orders (user_id) VALUES (NULL)").run()  # a NULL key references nothing
    assert _count(db, "orders") == 2 and db.prepare("SELECT user_id FROM orders WHERE id = 10").first("user_id") == 1


def test_a_parent_with_children_stays(db: D1CoreDatabase) -> None:
    with pytest.raises(D1Error, match=FAILED):
        db.prepare("DELETE FROM users WHERE id = 1").run()
    with pytest.raises(D1Error, match=FAILED):
        db.prepare("UPDATE users SET id = 2").run()
    assert db.prepare("SELECT id FROM users").raw() == [[1]]


def test_replace_of_a_parent_keeps_its_children_valid(db: D1CoreDatabase) -> None:
    db.prepare("INSERT OR REPLACE INTO users (id, name) VALUES (1, 'ada lovelace')").run()
    db.prepare("REPLACE INTO orders (id, user_id, note) VALUES (10, 1, 'replaced')").run()
    assert db.prepare("SELECT name FROM users").raw() == [["ada lovelace"]]
    assert db.prepare("SELECT note FROM orders").raw() == [["replaced"]]
    with pytest.raises(D1Error, match=FAILED):  # replacing the key's row by one with another key orphans
        db.prepare("INSERT OR REPLACE INTO users (id, name) VALUES (2, 'ada lovelace')").run()
    assert db.prepare("SELECT id FROM users").raw() == [[1]]


def test_foreign_keys_cannot_be_turned_off(db: D1CoreDatabase) -> None:
    db.prepare("PRAGMA foreign_keys = OFF").run()
    assert db.prepare("PRAGMA foreign_keys").first("foreign_keys") == 1
    with pytest.raises(D1Error, match=FAILED):
        db.prepare("INSERT INTO orders (user_id) VALUES (99)").run()


def test_deferred_within_a_batch(db: D1CoreDatabase) -> None:
    """D1's migration pattern: violate the keys for a while, put them right before the batch ends."""
    db.batch([
        db.prepare("PRAGMA defer_foreign_keys = ON"),
        db.prepare("DELETE FROM users WHERE id = 1"),
        db.prepare("INSERT INTO users (id, name) VALUES (1, 'ada again')"),
    ])
    assert db.prepare("SELECT name FROM users").raw() == [["ada again"]]
    with pytest.raises(D1Error, match=FAILED):
        db.batch([db.prepare("PRAGMA defer_foreign_keys = ON"), db.prepare("DELETE FROM users")])
    assert _count(db, "users") == 1  # the failed batch left nothing behind
    assert db.prepare("PRAGMA defer_foreign_keys").first("defer_foreign_keys") == 0  # ends with the transaction
    with pytest.raises(D1Error, match=FAILED):  # and the next statement is checked at once again
        db.prepare("DELETE FROM users").run()


def test_deferred_within_rest_statements(db: D1CoreDatabase) -> None:
    db.run_statements([
        ("PRAGMA defer_foreign_keys = ON", []),
        ("INSERT INTO lines VALUES (?, 'early')", ["20"]),
        ("INSERT INTO orders (id, user_id) VALUES (?, ?)", ["20", "1"]),
    ])
    assert db.prepare("SELECT sku FROM lines WHERE order_id = 20").raw() == [["early"]]


def test_a_malformed_key_is_sqlites_error(db: D1CoreDatabase) -> None:
    db.exec("CREATE TABLE loose (k TEXT)\nCREATE TABLE refs (k TEXT REFERENCES loose(k))")
    with pytest.raises(D1Error, match=r'^D1_ERROR: foreign key mismatch - "refs" referencing "loose": SQLITE_ERROR$'):
        db.prepare("INSERT INTO refs VALUES ('a')").run()


def test_duckdb_refuses_actions_it_does_not_run() -> None:
    db = DuckDBDatabase()
    db.exec("CREATE TABLE p (id INTEGER PRIMARY KEY)")
    for sql, words in (
        ("CREATE TABLE c (p INTEGER REFERENCES p(id) ON DELETE CASCADE)", "ON DELETE"),
        ("CREATE TABLE c (p INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)", "defer_foreign_keys"),
    ):
        with pytest.raises(D1Unsupported, match=words):
            db.prepare(sql).run()
    db.prepare("CREATE TABLE c (p INTEGER REFERENCES p(id) ON DELETE NO ACTION)").run()
    db.close()
