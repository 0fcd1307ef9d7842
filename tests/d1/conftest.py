"""Both D1 engines, for suites that must hold on each."""

from __future__ import annotations

from typing import Iterator

import pytest

from memory_sim.local.d1_core import D1CoreDatabase
from memory_sim.local.d1_duckdb import DuckDBDatabase
from memory_sim.local.d1_sqlite import SqliteDatabase

ENGINES = {"sqlite": SqliteDatabase, "duckdb": DuckDBDatabase}


@pytest.fixture(params=sorted(ENGINES))
def db(request: pytest.FixtureRequest) -> Iterator[D1CoreDatabase]:
    database = ENGINES[request.param]()
    yield database
    database.close()
