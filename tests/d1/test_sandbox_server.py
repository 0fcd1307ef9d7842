"""The D1 sandbox through the server's `/query` route (a real server on loopback, the official SDK as client):
the issue's reproduction, across a restart, and the differential property test of generated attacks."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Iterator

import cloudflare
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sandbox_attacks import Bystanders, make_bystanders, quote, snapshot, statements

from memory_sim.testing import TEST_TOKEN, ServerForTests

ENGINES = ["duckdb", "sqlite"]
REPLAY = [{"sql": "CREATE TABLE IF NOT EXISTS trigger_replay (a TEXT)"}, {"sql": "SELECT * FROM nowhere"}]


def _sdk(server: ServerForTests) -> cloudflare.Cloudflare:
    return cloudflare.Cloudflare(api_token=TEST_TOKEN, base_url=server.base_url, max_retries=0)


def _query(sdk: cloudflare.Cloudflare, account: str, db: str, **body: Any) -> str | None:
    """The D1 error message, or None when the statements ran."""
    try:
        list(sdk.d1.database.query(db, account_id=account, **body))
    except cloudflare.BadRequestError as exc:
        error = exc.body["errors"][0]  # type: ignore[index]
        assert error["code"] == 7500, error
        return str(error["message"])
    return None


def _own_file(server: ServerForTests, account: str, name: str) -> Path:
    return Path(server.app.state.accounts.get(account).d1.path(name))


def test_the_issue_reproduction_through_query_reaches_no_file_even_after_a_restart(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "p.db"
    target.parent.mkdir()
    attach = quote(f"ATTACH DATABASE {quote(str(target))} AS pw")
    planted = (f"INSERT INTO __sq_ddl VALUES (100000,{attach}); "
               "INSERT INTO __sq_ddl VALUES (100001,'CREATE TABLE pw.t AS SELECT 1 AS x')")
    with ServerForTests(tmp_path / "data", d1_engine="duckdb") as server, _sdk(server) as sdk:
        account = server.fresh_account_id()
        db = sdk.d1.database.create(account_id=account, name="t").uuid
        assert _query(sdk, account, db, sql=planted) == "D1_ERROR: no such table: __sq_ddl: SQLITE_ERROR"
        assert _query(sdk, account, db, batch=REPLAY) is not None  # the failing batch rebuilds the schema mirror
    with ServerForTests(tmp_path / "data", d1_engine="duckdb") as again, _sdk(again) as sdk:
        assert _query(sdk, account, db, sql="SELECT 1") is None  # the restart replays the ledger
    assert list(target.parent.iterdir()) == []


class AttackedServer:
    """A server with two accounts: one's database is attacked, the other's holds data nobody may touch."""

    def __init__(self, root: Path, engine: str) -> None:
        self.by: Bystanders = make_bystanders(root)
        self.server = ServerForTests(root / "server", d1_engine=engine).__enter__()
        self.sdk = _sdk(self.server)
        other = self.server.fresh_account_id()
        kept = self.sdk.d1.database.create(account_id=other, name="second").uuid
        _query(self.sdk, other, kept, sql="CREATE TABLE kept (v TEXT); INSERT INTO kept VALUES ('untouched')")
        self.account = self.server.fresh_account_id()
        self.db = self.sdk.d1.database.create(account_id=self.account, name="attacked").uuid
        notes = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"
        assert _query(self.sdk, self.account, self.db, sql=notes) is None
        self.own = _own_file(self.server, self.account, "attacked")
        self.before = snapshot(root, self.own)

    def close(self) -> None:
        self.sdk.close()
        self.server.__exit__(None, None, None)


@pytest.fixture(scope="module", params=ENGINES)
def attacked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AttackedServer]:
    target = AttackedServer(tmp_path_factory.mktemp(f"server-sandbox-{request.param}"), request.param)
    yield target
    target.close()


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_generated_attacks_through_query_reach_no_file_and_no_other_database(
    attacked: AttackedServer, data: st.DataObject
) -> None:
    sqls = data.draw(statements(attacked.by), label="statements")
    _query(attacked.sdk, attacked.account, attacked.db, sql="; ".join(sqls))
    assert _query(attacked.sdk, attacked.account, attacked.db, batch=REPLAY) is not None
    assert snapshot(attacked.by.root, attacked.own) == attacked.before
    with sqlite3.connect(attacked.by.victim) as victim:
        assert victim.execute("SELECT value FROM secret").fetchall() == [("another account's data",)]
    victim.close()
