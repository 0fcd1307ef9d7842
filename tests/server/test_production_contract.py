"""Production's answers where the emulator used to differ, over raw REST (the SDK would convert or refuse some of
these bodies before sending them): query bodies as the service reads them, number types in indexed metadata,
unknown routes and wrong methods in the envelope."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from memory_sim.testing import TEST_TOKEN, ServerForTests

AUTH = {"Authorization": f"Bearer {TEST_TOKEN}"}
ROWS = b'{"id":"a","values":[1,0,0],"metadata":{"npcId":"ann","day":2,"weight":0.5}}\n{"id":"b","values":[0,1,0]}\n'


def _indexed(server: ServerForTests, account_id: str) -> str:
    """An index 'mem' of the account with two vectors, `day` and `weight` indexed as numbers; its URL."""
    url = f"{server.base_url}/accounts/{account_id}/vectorize/v2/indexes"
    httpx.post(url, json={"name": "mem", "config": {"dimensions": 3, "metric": "cosine"}}, headers=AUTH).raise_for_status()
    for name in ("day", "weight"):
        httpx.post(f"{url}/mem/metadata_index/create", json={"propertyName": name, "indexType": "number"}, headers=AUTH).raise_for_status()
    httpx.post(f"{url}/mem/upsert", content=ROWS, headers={**AUTH, "Content-Type": "application/x-ndjson"}).raise_for_status()
    return f"{url}/mem"


def _query(index_url: str, body: bytes) -> httpx.Response:
    return httpx.post(f"{index_url}/query", content=body, headers={**AUTH, "Content-Type": "application/json"})


@pytest.mark.parametrize("value", [True, False])
def test_a_boolean_return_metadata_is_refused_over_rest(server: ServerForTests, account_id: str, value: bool) -> None:
    """Over REST nothing converts a boolean (only the Workers binding turns `true` into 'all')."""
    index = _indexed(server, account_id)
    body = b'{"vector":[1,0,0],  "returnMetadata":' + (b"true" if value else b"false") + b"}"
    reply = _query(index, body)
    assert reply.status_code == 400 and reply.json()["success"] is False
    assert reply.json()["errors"] == [{"code": 40026, "message": "Failed to parse the request body as JSON: "
                                       "returnMetadata: expected value at line 1 column 38"}]  # where the value starts


@pytest.mark.parametrize(
    "body, code, message",
    [
        ({"vector": [1, 0, 0], "vectorId": "b"}, 40020, "a query takes `vector` or `vectorId`, not both"),
        ({"topK": 2}, 40020, "a query needs `vector` (an array of numbers) or `vectorId`"),
        ({"vector": [1, 0, 0], "returnMetadata": "some"}, 40026,
         ("Failed to parse the request body as JSON: returnMetadata: unknown variant `some`, expected one of `none`, "
          "`indexed`, `all` at line 1 column 36")),
        ({"vector": [1, 0, 0], "returnValues": 1}, 40026,
         "Failed to parse the request body as JSON: returnValues: invalid type: integer `1`, expected a boolean at line 1 column 34"),
        ({"vector": [1, 0, 0], "topK": "3"}, 40026,
         'Failed to parse the request body as JSON: topK: invalid type: string "3", expected u32 at line 1 column 26'),
        ({"vector": [1, 0, 0], "topK": 60, "returnMetadata": "all"}, 40025, "max top K is 50, but got 60"),
    ],
)
def test_query_bodies_are_read_as_the_service_reads_them(server: ServerForTests, account_id: str, body: Any, code: int,
                                                         message: str) -> None:
    reply = _query(_indexed(server, account_id), orjson.dumps(body))
    assert reply.status_code == 400 and reply.json()["errors"] == [{"code": code, "message": message}]


def test_unparsable_body_is_40026(server: ServerForTests, account_id: str) -> None:
    reply = _query(_indexed(server, account_id), b"{not json")
    assert reply.status_code == 400 and reply.json()["errors"][0]["code"] == 40026
    assert reply.json()["errors"][0]["message"].startswith("Failed to parse the request body as JSON: ")


def test_return_metadata_levels_and_null(server: ServerForTests, account_id: str) -> None:
    index = _indexed(server, account_id)
    assert "metadata" not in _query(index, b'{"vector":[1,0,0],"topK":1,"returnMetadata":null}').json()["result"]["matches"][0]
    answer = _query(index, b'{"vector":[1,0,0],"topK":1,"returnMetadata":"indexed"}')
    assert answer.json()["result"]["matches"][0]["metadata"] == {"day": 2, "weight": 0.5}
    assert b'"day":2,' in answer.content or b'"day":2}' in answer.content  # an integer as written, not 2.0
    by_id = _query(index, b'{"vectorId":"a","topK":1,"returnMetadata":"all"}')
    assert b'"day":2,' in by_id.content and by_id.json()["result"]["matches"][0]["metadata"]["npcId"] == "ann"


def test_unknown_routes_and_wrong_methods_answer_in_the_envelope(server: ServerForTests, account_id: str) -> None:
    index = _indexed(server, account_id)
    path = f"/client/v4/accounts/{account_id}/vectorize/v2/nothing"
    missing = httpx.get(f"{server.base_url}/accounts/{account_id}/vectorize/v2/nothing", headers=AUTH)
    assert missing.status_code == 404 and missing.json() == {
        "success": False, "messages": [], "result": None,
        "errors": [{"code": 7003, "message": f"Could not route to {path}, perhaps your object identifier is invalid?"}]}
    wrong = httpx.get(f"{index}/query", headers=AUTH)
    assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"
    assert wrong.json()["success"] is False and wrong.json()["errors"][0]["code"] == 10405
    assert "GET" in wrong.json()["errors"][0]["message"] and "detail" not in wrong.json()
    put = httpx.put(f"{server.base_url}/accounts/{account_id}/d1/database", headers=AUTH)
    assert put.status_code == 405 and put.json()["errors"][0]["code"] == 10405
    outside = httpx.get(server.base_url.removesuffix("/client/v4") + "/nowhere", headers=AUTH)
    assert outside.status_code == 404 and outside.json()["errors"][0]["code"] == 7003
