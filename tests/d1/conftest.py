"""Both D1 engines, for suites that must hold on each; and the Cloudflare REST adapter against the local server
(DuckDB behind it), for parity."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from memory_sim.local.d1.core import D1CoreDatabase
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

ENGINES = {"sqlite": SqliteDatabase, "duckdb": DuckDBDatabase}


@pytest.fixture(scope="session")
def cloudflare_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from memory_sim.testing import ServerForTests

    with ServerForTests(tmp_path_factory.mktemp("cloudflare-server"), d1_engine="duckdb") as server:
        yield server


@pytest.fixture(params=[*sorted(ENGINES), "cloudflare"])
def db(request: pytest.FixtureRequest) -> Iterator[D1CoreDatabase]:
    if request.param == "cloudflare":
        yield request.getfixturevalue("cloudflare_server").new_database()
        return
    database = ENGINES[request.param]()
    yield database
    database.close()
