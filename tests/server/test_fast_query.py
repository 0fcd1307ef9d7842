"""The query route's plain-ASGI fast path (fast_query.QueryFastPath): same answers as the FastAPI route, behind
the token gate, errors in the envelope, and still described in the OpenAPI document."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import cloudflare
import httpx
import pytest

from memory_sim.server.app import create_app
from memory_sim.server.fast_query import QUERY_PATH, QueryFastPath
from memory_sim.server.testing import TEST_TOKEN, ServerForTests

BODY = {"vector": [1, 0, 0], "topK": 2, "returnMetadata": "all"}
ROWS = b'{"id":"a","values":[1,0,0],"metadata":{"k":1}}\n{"id":"b","values":[0,1,0]}\n'
BODIES: list[Any] = [BODY, {"vectorId": "b", "topK": 1}, {"vector": [1, 0]}, [1, 2], {"vector": [1, 0, 0], "filter": {"k": 1}}]


@pytest.fixture
def filled(sdk: cloudflare.Cloudflare, account_id: str) -> str:
    sdk.vectorize.indexes.create(account_id=account_id, name="mem", config={"dimensions": 3, "metric": "cosine"})
    httpx.post(f"{sdk.base_url}accounts/{account_id}/vectorize/v2/indexes/mem/upsert", content=ROWS,
               headers={"Authorization": f"Bearer {TEST_TOKEN}", "Content-Type": "application/x-ndjson"}).raise_for_status()
    return f"{sdk.base_url}accounts/{account_id}/vectorize/v2/indexes/mem/query"


def _answers(folder: Path, *, fast_path: bool) -> list[dict[str, Any]]:
    """Upsert then query through a fresh app (in-process ASGI), with or without the fast path in its stack."""
    app = create_app(folder, TEST_TOKEN, d1_engine="sqlite")
    if not fast_path:
        app.user_middleware = [m for m in app.user_middleware if m.cls is not QueryFastPath]
    auth = {"Authorization": f"Bearer {TEST_TOKEN}"}
    base = "http://test/client/v4/accounts/acc/vectorize/v2/indexes"

    async def run() -> list[dict[str, Any]]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), headers=auth) as client:
            await client.post(base, json={"name": "mem", "config": {"dimensions": 3, "metric": "cosine"}})
            await client.post(f"{base}/mem/upsert", content=ROWS)
            replies = [await client.post(f"{base}/mem/query", json=body) for body in BODIES]
            return [{"status": r.status_code, **r.json()} for r in replies]

    try:
        return asyncio.run(run())
    finally:
        app.state.accounts.close()


def test_fast_path_answers_as_the_route(tmp_path: Path) -> None:
    fast = _answers(tmp_path / "fast", fast_path=True)
    routed = _answers(tmp_path / "routed", fast_path=False)
    assert fast == routed
    assert [m["id"] for m in fast[0]["result"]["matches"]] == ["a", "b"] and fast[0]["result"]["matches"][0]["metadata"] == {"k": 1}
    assert [r["status"] for r in fast] == [200, 200, 400, 400, 400]  # dims, not an object, no metadata index


def test_token_is_checked_before_the_fast_path(filled: str) -> None:
    missing = httpx.post(filled, json=BODY)
    wrong = httpx.post(filled, json=BODY, headers={"Authorization": "Bearer nope"})
    assert missing.status_code == 401 and missing.json()["errors"][0]["code"] == 10000
    assert wrong.status_code == 403 and wrong.json()["errors"][0]["code"] == 9109


def test_errors_come_back_in_the_envelope(sdk: cloudflare.Cloudflare, account_id: str, filled: str) -> None:
    with pytest.raises(cloudflare.NotFoundError) as missing:
        sdk.vectorize.indexes.query("nothere", account_id=account_id, vector=[1, 0, 0])
    assert missing.value.body["errors"][0]["code"] == 40013 and missing.value.body["success"] is False
    not_object = httpx.post(filled, json=[1, 2], headers={"Authorization": f"Bearer {TEST_TOKEN}"})
    assert not_object.status_code == 400 and "JSON object" in not_object.json()["errors"][0]["message"]


def test_typed_sdk_query_and_openapi(sdk: cloudflare.Cloudflare, account_id: str, filled: str) -> None:
    found = sdk.vectorize.indexes.query("mem", account_id=account_id, vector=[0, 1, 0], top_k=1)
    assert found is not None and found.count == 1 and found.matches[0].id == "b"
    spec = httpx.get(f"{sdk.base_url}".replace("/client/v4/", "/openapi.json")).json()
    assert any(QUERY_PATH.match(path.replace("{account_id}", "x").replace("{name}", "y")) for path in spec["paths"])


def test_other_routes_pass_through(sdk: cloudflare.Cloudflare, account_id: str, filled: str) -> None:
    assert QUERY_PATH.match("/client/v4/accounts/a/vectorize/v2/indexes/mem/query")
    assert not QUERY_PATH.match("/client/v4/accounts/a/vectorize/v2/indexes/mem/query/extra")
    assert sdk.vectorize.indexes.info("mem", account_id=account_id).vector_count == 2
