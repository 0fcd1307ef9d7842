"""Every bad body is a 400 in Cloudflare's envelope, checked at the front door: D1 batches whose items are not query
objects, and lone surrogates (a JSON escape such as "\\ud800" without its pair) wherever text goes. Nothing stored
changes, and the keep-alive connection serves the next request."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from memory_sim.builder.server import build_server_app
from memory_sim.server.loopback import LoopbackServer
from memory_sim.testing import TEST_TOKEN

INDEX = "/accounts/acc/vectorize/v2/indexes/idx"
ROW = b'{"id": "kept", "values": [1, 0], "metadata": {"k": "v"}, "namespace": "ns"}\n'
JSON = {"Content-Type": "application/json"}
NDJSON = {"Content-Type": "application/x-ndjson"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, str, Any]]:
    """A server with one index (one vector) and one database (one row), and a keep-alive client."""
    app = build_server_app(tmp_path_factory.mktemp("bad-bodies"), TEST_TOKEN, d1_engine="sqlite")
    with LoopbackServer(app) as running, httpx.Client(base_url=running.base_url,
                                                      headers={"Authorization": f"Bearer {TEST_TOKEN}"}) as client:
        client.post("/accounts/acc/vectorize/v2/indexes", json={"name": "idx", "config": {"dimensions": 2, "metric": "cosine"}})
        client.post(f"{INDEX}/metadata_index/create", json={"propertyName": "k", "indexType": "string"})
        assert client.post(f"{INDEX}/upsert", content=ROW, headers=NDJSON).status_code == 200
        database = client.post("/accounts/acc/d1/database", json={"name": "db"}).json()["result"]["uuid"]
        client.post(f"/accounts/acc/d1/database/{database}/query", json={"sql": "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('kept')"})
        yield client, f"/accounts/acc/d1/database/{database}", app


def stored(client: httpx.Client, database: str) -> Any:
    """What the server holds: the vector, the index's count and metadata indexes, the table's rows."""
    vector = client.post(f"{INDEX}/get_by_ids", json={"ids": ["kept"]}).json()["result"]
    count = client.get(f"{INDEX}/info").json()["result"]["vectorCount"]
    metadata = client.get(f"{INDEX}/metadata_index/list").json()["result"]
    rows = client.post(f"{database}/query", json={"sql": "SELECT v FROM t"}).json()["result"][0]["results"]
    names = [i["name"] for i in client.get("/accounts/acc/vectorize/v2/indexes").json()["result"]]
    return vector, count, metadata, rows, names


def bad_then_good(client: httpx.Client, method: str, url: str, **request: Any) -> httpx.Response:
    """The bad request, then a good one on the same connection: the connection must still serve it."""
    bad = client.request(method, url, **request)
    good = client.get("/accounts/acc/vectorize/v2/indexes")
    assert good.status_code == 200, good.text
    same = [r.extensions["network_stream"].get_extra_info("client_addr") for r in (bad, good)]
    assert same[0] == same[1], f"{method} {url}: the connection was closed after {bad.status_code}"
    return bad


def assert_400(reply: httpx.Response, *words: str) -> None:
    body = reply.json()
    assert reply.status_code == 400 and body["success"] is False and body["result"] is None, reply.text
    message = body["errors"][0]["message"]
    assert all(word in message for word in words) and "Traceback" not in message and "internal error" not in message, message


@pytest.mark.parametrize("item", ["SELECT 1", 1, True, [1], None, 2.5])
@pytest.mark.parametrize("route", ["query", "raw"])
def test_a_batch_item_that_is_not_a_query_object_is_400(served: Any, route: str, item: Any) -> None:
    client, database, _ = served
    before = stored(client, database)
    reply = bad_then_good(client, "POST", f"{database}/{route}", json={"batch": [{"sql": "DELETE FROM t"}, item]})
    assert_400(reply, "batch[1]", "a query is an object")
    assert reply.json()["errors"][0]["source"] == {"pointer": "/batch/1"}
    assert stored(client, database) == before  # the valid DELETE before it did not run either


@pytest.mark.parametrize("body", [{"batch": [{"sql": 1}]}, {"batch": [{"sql": "SELECT ?", "params": "x"}]},
                                  {"sql": "SELECT ?", "params": {"a": 1}}, {"batch": []}, {"batch": "SELECT 1"}, {}])
def test_other_malformed_statement_bodies_are_400(served: Any, body: Any) -> None:
    client, database, _ = served
    assert_400(bad_then_good(client, "POST", f"{database}/query", json=body), "invalid request")


LONE = "\\ud800"  # as JSON text: the escape of a high surrogate with no low one after it
SURROGATE_BODIES = [  # (route under the index or database, JSON or NDJSON text with a lone surrogate)
    ("index", "upsert", f'{{"id": "{LONE}", "values": [1, 0]}}'),
    ("index", "insert", f'{{"id": "x{LONE}", "values": [1, 0]}}'),
    ("index", "upsert", f'{{"id": "kept", "values": [0, 1], "metadata": {{"k": "{LONE}"}}}}'),
    ("index", "upsert", f'{{"id": "kept", "values": [0, 1], "metadata": {{"{LONE}": 1}}}}'),
    ("index", "upsert", '{"id": "kept", "values": [0, 1], "metadata": {"k": ["\\udfff"]}}'),
    ("index", "upsert", f'{{"id": "kept", "values": [0, 1], "namespace": "{LONE}"}}'),
    ("index", "get_by_ids", f'{{"ids": ["{LONE}"]}}'),
    ("index", "delete_by_ids", f'{{"ids": ["kept", "{LONE}"]}}'),
    ("index", "query", f'{{"vector": [1, 0], "namespace": "{LONE}"}}'),
    ("index", "query", f'{{"vector": [1, 0], "filter": {{"k": "{LONE}"}}}}'),
    ("index", "query", f'{{"vectorId": "{LONE}"}}'),
    ("index", "metadata_index/create", f'{{"propertyName": "{LONE}", "indexType": "string"}}'),
    ("index", "metadata_index/delete", f'{{"propertyName": "k{LONE}"}}'),
    ("indexes", "", f'{{"name": "idx2", "description": "{LONE}", "config": {{"dimensions": 2, "metric": "cosine"}}}}'),
    ("database", "query", f'{{"sql": "INSERT INTO t VALUES (\'{LONE}\')"}}'),
    ("database", "raw", f'{{"sql": "INSERT INTO t VALUES (?)", "params": ["{LONE}"]}}'),
    ("database", "query", f'{{"batch": [{{"sql": "DELETE FROM t"}}, {{"sql": "SELECT ?", "params": ["{LONE}"]}}]}}'),
    ("databases", "", f'{{"name": "x{LONE}"}}'),
    ("ai", "", f'{{"text": ["{LONE}"]}}'),
]


@pytest.mark.parametrize(("where", "route", "text"), SURROGATE_BODIES)
def test_a_lone_surrogate_anywhere_is_400_and_changes_nothing(served: Any, where: str, route: str, text: str) -> None:
    client, database, _ = served
    url = {"index": f"{INDEX}/{route}", "indexes": "/accounts/acc/vectorize/v2/indexes", "database": f"{database}/{route}",
           "databases": "/accounts/acc/d1/database", "ai": "/accounts/acc/ai/run/@cf/baai/bge-base-en-v1.5"}[where]
    before = stored(client, database)
    headers = NDJSON if route in ("insert", "upsert") else JSON
    reply = bad_then_good(client, "POST", url, content=text.encode(), headers=headers)
    assert_400(reply, "not valid Unicode")
    assert stored(client, database) == before


def test_bytes_that_are_not_utf8_in_ndjson_are_refused_not_replaced(served: Any) -> None:
    client, database, _ = served
    before = stored(client, database)
    reply = bad_then_good(client, "POST", f"{INDEX}/upsert", content=b'{"id": "caf\xe9", "values": [1, 0]}\n', headers=NDJSON)
    assert_400(reply, "line 1", "not valid Unicode")
    assert stored(client, database) == before


def test_an_unexpected_error_is_a_500_envelope_and_keeps_the_connection(tmp_path: Path) -> None:
    app = build_server_app(tmp_path, TEST_TOKEN, d1_engine="sqlite")

    def broken() -> None:
        raise RuntimeError("a bug")

    app.add_api_route("/client/v4/broken", broken, methods=["GET"])
    with LoopbackServer(app) as running, httpx.Client(base_url=running.base_url,
                                                      headers={"Authorization": f"Bearer {TEST_TOKEN}"}) as client:
        failed = client.get("/broken")
        assert failed.status_code == 500 and failed.json()["errors"][0] == {"code": 1000, "message": "internal error: RuntimeError: a bug"}
        after = client.get("/accounts/acc/d1/database")
        assert after.status_code == 200
        addresses = {r.extensions["network_stream"].get_extra_info("client_addr") for r in (failed, after)}
        assert len(addresses) == 1  # the same connection served both


@pytest.mark.parametrize("raw", [b'{"a": "\\ud800"}', b'{"\\udfff": 1}', b'{"a": "caf\xe9"}', b'{"a": NaN}', b'{"a": 1e999}', b'{"a"', b""])
def test_both_json_parsers_refuse_the_same_bodies(monkeypatch: pytest.MonkeyPatch, raw: bytes) -> None:
    """orjson, and the standard library's parser where orjson is missing: neither lets unstorable text through."""
    import json

    from memory_sim.server import bodies

    with pytest.raises(bodies.BadJson):
        bodies.json_value(raw)
    monkeypatch.setattr(bodies, "loads", json.loads)
    with pytest.raises(bodies.BadJson):
        bodies.json_value(raw)
    assert bodies.json_value(b'{"a": "\\ud83d\\ude00", "b": [1.5, null]}') == {"a": "\U0001f600", "b": [1.5, None]}


def test_nan_in_ndjson_gets_the_bindings_own_words(served: Any) -> None:
    """Python's json writes NaN; the line parses, and the binding refuses it as it does in-process."""
    client, database, _ = served
    before = stored(client, database)
    for value in ("NaN", "Infinity", "-Infinity"):
        reply = bad_then_good(client, "POST", f"{INDEX}/upsert", content=f'{{"id": "n", "values": [{value}, 0]}}'.encode(), headers=NDJSON)
        assert_400(reply, "finite")
    reply = bad_then_good(client, "POST", f"{INDEX}/upsert", content=b'{"id": "n\\udc00", "values": [NaN, 0]}', headers=NDJSON)
    assert_400(reply, "not valid Unicode")
    assert stored(client, database) == before
