"""docs/d1.md's table of the SQLite features D1 supports says what each engine does: every row's example runs on
both engines, and answers or is refused (a one-line D1Unsupported naming the sqlite engine) as the table says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

DOC = Path(__file__).resolve().parents[2] / "docs" / "d1.md"
SETUP = ["CREATE TABLE f (id INTEGER PRIMARY KEY, v TEXT)", "INSERT INTO f (v) VALUES ('a')",
         "CREATE VIEW f_ids AS SELECT id FROM f"]
ENGINES = {"sqlite": SqliteDatabase, "duckdb": DuckDBDatabase}


def rows() -> list[tuple[str, str, str, str]]:
    section = DOC.read_text("utf-8").split("## SQLite features D1 supports, engine by engine", 1)[1].split("\n## ")[0]
    found = re.findall(r"^\| (.+?) \| `(.+?)` \| (.+?) \| (.+?) \|$", section, re.M)
    return [(feature, example, sqlite, duck) for feature, example, sqlite, duck in found]


def test_the_table_lists_the_features() -> None:
    features = [row[0] for row in rows()]
    assert len(features) >= 25 and {"triggers", "FTS5 full-text search", "window functions"} <= set(features)


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("row", rows(), ids=lambda row: row[0])
def test_each_engine_does_what_the_table_says(engine: str, row: tuple[str, str, str, str]) -> None:
    _, example, sqlite_says, duckdb_says = row
    says = sqlite_says if engine == "sqlite" else duckdb_says
    database = ENGINES[engine]()
    for sql in SETUP:
        database.prepare(sql).run()
    try:
        if says.startswith("answers"):
            database.prepare(example).raw()
        else:
            assert says.startswith("refused"), says
            with pytest.raises(D1Unsupported, match="sqlite engine"):
                database.prepare(example).raw()
    finally:
        database.close()
