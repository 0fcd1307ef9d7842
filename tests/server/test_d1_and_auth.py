"""D1 routes through the official SDK, bearer tokens, account isolation, /health and the OpenAPI description."""

from __future__ import annotations

import cloudflare
import httpx
import pytest

from memory_sim.builder.server import build_server_app
from memory_sim.server.auth import parse_tokens
from memory_sim.server.loopback import LoopbackServer
from memory_sim.testing import TEST_TOKEN


def test_database_lifecycle_and_queries(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    made = sdk.d1.database.create(account_id=account_id, name="memory")
    assert made.name == "memory" and made.uuid
    assert [d.name for d in sdk.d1.database.list(account_id=account_id)] == ["memory"]
    assert sdk.d1.database.get(made.uuid, account_id=account_id).name == "memory"
    query = sdk.d1.database.query
    query(made.uuid, account_id=account_id, sql="CREATE TABLE m (id INTEGER PRIMARY KEY, npc TEXT, day INTEGER)")
    inserted = list(query(made.uuid, account_id=account_id, sql="INSERT INTO m (npc, day) VALUES (?1, ?2)", params=["ada", "3"]))
    assert inserted[0].meta.changes == 1 and inserted[0].meta.last_row_id == 1
    several = list(query(made.uuid, account_id=account_id,
                         sql="INSERT INTO m (npc, day) VALUES ('bob', 4); SELECT npc, day FROM m ORDER BY id"))
    assert len(several) == 2 and several[1].results == [{"npc": "ada", "day": 3}, {"npc": "bob", "day": 4}]
    batch = list(query(made.uuid, account_id=account_id, batch=[{"sql": "SELECT count(*) AS n FROM m"},
                                                               {"sql": "SELECT npc FROM m WHERE day = ?", "params": ["4"]}]))
    assert [r.results for r in batch] == [[{"n": 2}], [{"npc": "bob"}]]
    raw = list(sdk.d1.database.raw(made.uuid, account_id=account_id, sql="SELECT npc, day FROM m WHERE day > ?", params=["99"]))
    assert raw[0].results.columns == ["npc", "day"] and raw[0].results.rows == []
    sdk.d1.database.delete(made.uuid, account_id=account_id)
    with pytest.raises(cloudflare.NotFoundError):
        sdk.d1.database.get(made.uuid, account_id=account_id)


def test_failing_batch_rolls_back_and_points_at_the_statement(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    db = sdk.d1.database.create(account_id=account_id, name="m").uuid
    sdk.d1.database.query(db, account_id=account_id, sql="CREATE TABLE t (v TEXT)")
    with pytest.raises(cloudflare.BadRequestError) as failed:
        sdk.d1.database.query(db, account_id=account_id, batch=[{"sql": "INSERT INTO t VALUES ('x')"}, {"sql": "SELECT * FROM nowhere"}])
    error = failed.value.body["errors"][0]
    assert error["code"] == 7500 and error["message"].startswith("D1_ERROR: no such table") and error["source"] == {"pointer": "/batch/1"}
    count = list(sdk.d1.database.query(db, account_id=account_id, sql="SELECT count(*) AS n FROM t"))
    assert count[0].results == [{"n": 0}]


def test_tokens_are_required(server, account_id: str) -> None:
    url = f"{server.base_url}/accounts/{account_id}/vectorize/v2/indexes"
    missing = httpx.get(url)
    assert missing.status_code == 401 and missing.json()["errors"][0]["code"] == 10000 and missing.json()["success"] is False
    wrong = httpx.get(url, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 403 and wrong.json()["errors"][0]["code"] == 9109
    assert httpx.get(url, headers={"Authorization": f"Bearer {TEST_TOKEN}"}).status_code == 200
    with pytest.raises(cloudflare.PermissionDeniedError):
        cloudflare.Cloudflare(api_token="nope", base_url=server.base_url, max_retries=0).d1.database.list(account_id=account_id)


def test_several_tokens_separated_by_commas(tmp_path) -> None:
    assert parse_tokens("one:x, two:x+y,,").owners == {"one": {"x"}, "two": {"x", "y"}}
    with LoopbackServer(build_server_app(tmp_path, "one:x,two:x+y", d1_engine="sqlite")) as running:
        for token in ("one", "two"):
            reply = httpx.get(f"{running.base_url}/accounts/x/d1/database", headers={"Authorization": f"Bearer {token}"})
            assert reply.status_code == 200
        assert httpx.get(f"{running.base_url}/accounts/x/d1/database", headers={"Authorization": "Bearer three"}).status_code == 403
        other = httpx.get(f"{running.base_url}/accounts/y/d1/database", headers={"Authorization": "Bearer one"})
        assert other.status_code == 403 and other.json()["errors"] == [{"code": 10000, "message": "Authentication error"}]


def test_accounts_see_only_their_own(sdk: cloudflare.Cloudflare, server, data_root) -> None:
    first, second = server.fresh_account_id(), server.fresh_account_id()
    sdk.vectorize.indexes.create(account_id=first, name="mine", config={"dimensions": 2, "metric": "cosine"})
    db = sdk.d1.database.create(account_id=first, name="mine").uuid
    assert list(sdk.vectorize.indexes.list(account_id=second)) == []
    assert list(sdk.d1.database.list(account_id=second)) == []
    with pytest.raises(cloudflare.NotFoundError):
        sdk.d1.database.get(db, account_id=second)
    sdk.vectorize.indexes.create(account_id=second, name="mine", config={"dimensions": 3, "metric": "cosine"})
    assert sdk.vectorize.indexes.get("mine", account_id=first).config.dimensions == 2
    assert (data_root / first / "vectorize").is_dir() and (data_root / first / "d1").is_dir()
    with pytest.raises(cloudflare.BadRequestError, match="invalid account id"):
        sdk.d1.database.list(account_id="bad id!")


def test_health_and_openapi(server) -> None:
    root = server.base_url.removesuffix("/client/v4")
    assert httpx.get(f"{root}/health").json() == {"success": True, "errors": [], "messages": [], "result": {"status": "ok"}}
    paths = httpx.get(f"{root}/openapi.json").json()["paths"]
    assert "/client/v4/accounts/{account_id}/vectorize/v2/indexes/{name}/query" in paths
    assert "/client/v4/accounts/{account_id}/d1/database/{database_id}/raw" in paths


def test_a_server_without_tokens_is_refused(tmp_path) -> None:
    from memory_sim.errors import ConfigError

    with pytest.raises(ConfigError, match="token"):
        build_server_app(tmp_path, " , ")


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_query_meta_has_every_production_field(tmp_path, engine: str) -> None:
    """The official SDK's `Meta` model reads every field production sends; none is left unset, on either engine."""
    from memory_sim.testing import ServerForTests

    with ServerForTests(tmp_path, d1_engine=engine) as server:
        sdk = cloudflare.Cloudflare(api_token=TEST_TOKEN, base_url=server.base_url, max_retries=0)
        account_id = server.fresh_account_id()
        made = sdk.d1.database.create(account_id=account_id, name="memory")
        sdk.d1.database.query(made.uuid, account_id=account_id, sql="CREATE TABLE m (id INTEGER PRIMARY KEY, v TEXT)")
        for answer in (sdk.d1.database.query(made.uuid, account_id=account_id, sql="INSERT INTO m (v) VALUES ('a')"),
                       sdk.d1.database.raw(made.uuid, account_id=account_id, sql="SELECT v FROM m")):
            meta = list(answer)[0].meta
            assert meta is not None and meta.timings is not None
            unset = [name for name in type(meta).model_fields if getattr(meta, name) is None]
            assert unset == [] and meta.served_by_primary is True
            assert meta.timings.sql_duration_ms == meta.duration and (meta.model_extra or {}).get("total_attempts") == 1
        sdk.close()
