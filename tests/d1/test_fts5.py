"""Full-text search (FTS5, FTS4) and R*Tree virtual tables on the sqlite engine, as D1 allows them, with the
sandbox still in place: FTS5 reads `PRAGMA data_version` while it builds its tables, which the authorizer has
to let through (a read of a counter, no setting), while everything the sandbox refuses stays refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_sim.errors import D1Error
from memory_sim.local.d1.sqlite_engine import SqliteDatabase


@pytest.fixture
def db(tmp_path: Path) -> SqliteDatabase:
    return SqliteDatabase(tmp_path / "db.sqlite")


def test_fts5_tables_are_created_filled_searched_and_dropped(db: SqliteDatabase) -> None:
    db.prepare("CREATE VIRTUAL TABLE notes USING fts5(npc, body)").run()
    db.batch([db.prepare("INSERT INTO notes (npc, body) VALUES (?, ?)").bind(npc, body) for npc, body in [
        ("margaret", "Tom borrowed my ladder and never returned it"),
        ("tom", "The bakery smelled of fresh bread this morning"),
        ("margaret", "I saw Tom at the bakery again"),
    ]])
    hits = db.prepare("SELECT npc, body FROM notes WHERE notes MATCH ? ORDER BY rank").bind("bakery").all()
    assert sorted(row["body"] for row in hits.results) == [
        "I saw Tom at the bakery again", "The bakery smelled of fresh bread this morning"]
    assert db.prepare("SELECT count(*) AS n FROM notes WHERE notes MATCH 'npc:margaret'").first("n") == 2
    db.prepare("DELETE FROM notes WHERE npc = 'tom'").run()
    assert db.prepare("SELECT count(*) AS n FROM notes WHERE notes MATCH 'bakery'").first("n") == 1
    db.prepare("CREATE VIRTUAL TABLE words USING fts5vocab(notes, row)").run()
    assert db.prepare("SELECT count(*) AS n FROM words WHERE term = 'ladder'").first("n") == 1
    db.prepare("DROP TABLE words").run()
    db.prepare("DROP TABLE notes").run()
    assert db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name LIKE 'notes%'").first("n") == 0


def test_fts5_survives_reopening_the_file(tmp_path: Path) -> None:
    first = SqliteDatabase(tmp_path / "db.sqlite")
    first.prepare("CREATE VIRTUAL TABLE notes USING fts5(body)").run()
    first.prepare("INSERT INTO notes (body) VALUES ('the mill wheel creaks')").run()
    first.close()
    again = SqliteDatabase(tmp_path / "db.sqlite")
    assert again.prepare("SELECT body FROM notes WHERE notes MATCH 'mill'").first("body") == "the mill wheel creaks"


@pytest.mark.parametrize("create", [
    "CREATE VIRTUAL TABLE docs USING fts4(body)",
    "CREATE VIRTUAL TABLE boxes USING rtree(id, min_x, max_x)",
])
def test_the_other_allowed_modules_work_too(db: SqliteDatabase, create: str) -> None:
    db.prepare(create).run()


@pytest.mark.parametrize("sql", [
    "PRAGMA journal_mode = OFF", "ATTACH DATABASE ':memory:' AS other", "PRAGMA writable_schema = 1",
    "CREATE VIRTUAL TABLE series USING generate_series",
])
def test_the_sandbox_still_refuses_what_it_refused(db: SqliteDatabase, sql: str) -> None:
    with pytest.raises(D1Error):
        db.prepare(sql).run()
