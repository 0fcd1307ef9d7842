"""Vectorize v2 routes through the official SDK, unchanged, against the local server (contract §2)."""

from __future__ import annotations

import json

import cloudflare
import httpx
import pytest
from server_helpers import vectors_ndjson

from memory_sim.testing import TEST_TOKEN


def _index(sdk: cloudflare.Cloudflare, account_id: str, name: str = "mem", dims: int = 3) -> None:
    sdk.vectorize.indexes.create(account_id=account_id, name=name, config={"dimensions": dims, "metric": "cosine"}, description="d")


ROWS = [
    {"id": "a", "values": [1, 0, 0], "metadata": {"npcId": "ada", "day": 1}},
    {"id": "b", "values": [0, 1, 0], "metadata": {"npcId": "bob", "day": 2}, "namespace": "village"},
    {"id": "c", "values": [0.9, 0.1, 0], "metadata": {"npcId": "ada", "day": 3}},
]


def test_index_lifecycle(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    made = sdk.vectorize.indexes.create(account_id=account_id, name="mem", config={"dimensions": 3, "metric": "euclidean"})
    assert made is not None and made.name == "mem" and made.config.dimensions == 3 and made.config.metric == "euclidean"
    assert [i.name for i in sdk.vectorize.indexes.list(account_id=account_id)] == ["mem"]
    assert sdk.vectorize.indexes.get("mem", account_id=account_id).config.metric == "euclidean"
    with pytest.raises(cloudflare.ConflictError):
        sdk.vectorize.indexes.create(account_id=account_id, name="mem", config={"dimensions": 3, "metric": "cosine"})
    sdk.vectorize.indexes.delete("mem", account_id=account_id)
    with pytest.raises(cloudflare.NotFoundError) as missing:
        sdk.vectorize.indexes.get("mem", account_id=account_id)
    assert missing.value.body["errors"][0] == {"code": 3000, "message": 'vectorize.index.not_found - Index name "mem"'}


def test_insert_query_get_delete(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    _index(sdk, account_id)
    indexes = sdk.vectorize.indexes
    indexes.metadata_index.create("mem", account_id=account_id, property_name="npcId", index_type="string")
    assert indexes.insert("mem", account_id=account_id, body=vectors_ndjson(ROWS)).mutation_id
    found = indexes.query("mem", account_id=account_id, vector=[1, 0, 0], top_k=2, return_metadata="all",
                          filter={"npcId": "ada"})
    assert [m.id for m in found.matches] == ["a", "c"] and found.matches[0].metadata == {"npcId": "ada", "day": 1}
    assert found.matches[0].score == pytest.approx(1.0)
    by_id = indexes.query("mem", account_id=account_id, vector=[0, 0, 1], top_k=1, extra_body={"vectorId": "b", "vector": None})
    assert by_id.matches[0].id == "b"
    in_ns = indexes.query("mem", account_id=account_id, vector=[1, 0, 0], top_k=5, extra_body={"namespace": "village"})
    assert [m.id for m in in_ns.matches] == ["b"]
    got = indexes.get_by_ids("mem", account_id=account_id, ids=["b", "zz"])
    assert got == [{"id": "b", "values": [0.0, 1.0, 0.0], "metadata": {"npcId": "bob", "day": 2}, "namespace": "village"}]
    indexes.delete_by_ids("mem", account_id=account_id, ids=["a"])
    info = indexes.info("mem", account_id=account_id)
    assert info.vector_count == 2 and info.dimensions == 3 and info.processed_up_to_mutation


def test_insert_keeps_first_upsert_replaces(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    _index(sdk, account_id)
    indexes = sdk.vectorize.indexes
    indexes.insert("mem", account_id=account_id, body=vectors_ndjson([{"id": "a", "values": [1, 0, 0]}]))
    indexes.insert("mem", account_id=account_id, body=vectors_ndjson([{"id": "a", "values": [0, 1, 0]}]))
    assert indexes.get_by_ids("mem", account_id=account_id, ids=["a"])[0]["values"] == [1.0, 0.0, 0.0]
    indexes.upsert("mem", account_id=account_id, body=vectors_ndjson([{"id": "a", "values": [0, 1, 0]}]))
    assert indexes.get_by_ids("mem", account_id=account_id, ids=["a"])[0]["values"] == [0.0, 1.0, 0.0]


def test_multipart_vectors_part_and_unparsable_behaviour(server, account_id: str, sdk: cloudflare.Cloudflare) -> None:
    _index(sdk, account_id)
    url = f"{server.base_url}/accounts/{account_id}/vectorize/v2/indexes/mem/insert"
    headers = {"Authorization": f"Bearer {TEST_TOKEN}"}
    body = vectors_ndjson(ROWS[:1]) + b"not json\n" + vectors_ndjson(ROWS[2:])
    files = {"vectors": ("vectors.ndjson", body, "application/x-ndjson")}  # what wrangler sends
    refused = httpx.post(url, files=files, headers=headers)
    assert refused.status_code == 400 and refused.json()["success"] is False
    assert "line 2" in refused.json()["errors"][0]["message"]
    kept = httpx.post(url + "?unparsable-behavior=discard", files=files, headers=headers)
    assert kept.status_code == 200 and kept.json()["result"]["mutationId"]
    assert sdk.vectorize.indexes.info("mem", account_id=account_id).vector_count == 2


def test_rest_batch_limit_is_5000(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    _index(sdk, account_id, dims=2)
    rows = [{"id": f"v{i}", "values": [1, i]} for i in range(5001)]
    with pytest.raises(cloudflare.BadRequestError, match="5000"):
        sdk.vectorize.indexes.upsert("mem", account_id=account_id, body=vectors_ndjson(rows))
    sdk.vectorize.indexes.upsert("mem", account_id=account_id, body=vectors_ndjson(rows[:5000]))  # over the binding's 1000
    assert sdk.vectorize.indexes.info("mem", account_id=account_id).vector_count == 5000


def test_list_with_cursor(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    _index(sdk, account_id, dims=2)
    sdk.vectorize.indexes.insert("mem", account_id=account_id, body=vectors_ndjson([{"id": f"v{i:02}", "values": [1, i]} for i in range(25)]))
    seen, cursor = [], None
    while True:
        page = sdk.vectorize.indexes.list_vectors("mem", account_id=account_id, count=10, **({"cursor": cursor} if cursor else {}))
        seen += [v.id for v in page.vectors]
        assert page.total_count == 25
        if not page.is_truncated:
            break
        cursor = page.next_cursor
    assert seen == [f"v{i:02}" for i in range(25)]


def test_metadata_indexes(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    _index(sdk, account_id)
    md = sdk.vectorize.indexes.metadata_index
    md.create("mem", account_id=account_id, property_name="day", index_type="number")
    listed = md.list("mem", account_id=account_id)
    assert [(m.property_name, m.index_type) for m in listed.metadata_indexes] == [("day", "number")]
    md.delete("mem", account_id=account_id, property_name="day")
    assert md.list("mem", account_id=account_id).metadata_indexes == []


def test_errors_in_the_envelope(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    _index(sdk, account_id)
    with pytest.raises(cloudflare.BadRequestError) as wrong:
        sdk.vectorize.indexes.query("mem", account_id=account_id, vector=[1, 0])
    error = wrong.value.body["errors"][0]
    assert wrong.value.status_code == 400 and error == {
        "code": 40006, "message": "invalid query vector, expected 3 dimensions, and got 2 dimensions"}
    with pytest.raises(cloudflare.BadRequestError, match="no metadata index"):
        sdk.vectorize.indexes.query("mem", account_id=account_id, vector=[1, 0, 0], filter={"npcId": "x"})
    reply = httpx.post(f"{sdk.base_url}accounts/{account_id}/vectorize/v2/indexes/mem/query",
                       content=b"{not json", headers={"Authorization": f"Bearer {TEST_TOKEN}"})
    assert reply.status_code == 400 and reply.json()["success"] is False and json.dumps(reply.json())
