"""The adapter's hot query path (`CloudflareClient.post_json`): retries, error mapping and answers as any SDK call."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import Request
from fastapi.responses import JSONResponse

from memory_sim.bindings.vectorize import Vector
from memory_sim.cloudflare.client import CloudflareClient
from memory_sim.cloudflare.vectorize import CloudflareVectorizeAccount
from memory_sim.errors import VectorizeInputError, VectorizeUnavailable
from memory_sim.retry import Backoff
from memory_sim.server.loopback import free_port
from memory_sim.testing import ServerForTests


class FlakyQueries:
    """Answers the first `left` query requests with `status`, then lets them through."""

    def __init__(self) -> None:
        self.status, self.left, self.queries = 503, 0, 0

    async def __call__(self, request: Request, call_next: Any) -> Any:
        if request.url.path.endswith("/query"):
            self.queries += 1
            if self.left > 0:
                self.left -= 1
                body = {"success": False, "errors": [{"code": 10001, "message": "busy"}], "messages": [], "result": None}
                return JSONResponse(body, status_code=self.status)
        return await call_next(request)


@pytest.fixture
def flaky(tmp_path: Path) -> Iterator[tuple[ServerForTests, FlakyQueries]]:
    from starlette.middleware.base import BaseHTTPMiddleware

    running = ServerForTests(tmp_path)
    gate = FlakyQueries()
    running.app.add_middleware(BaseHTTPMiddleware, dispatch=gate)
    with running:
        yield running, gate


def _filled(client: CloudflareClient) -> Any:
    account = CloudflareVectorizeAccount(client)
    account.create_index("mem", 2, "cosine")
    index = account.index("mem")
    index.upsert([Vector("a", [1.0, 0.0], {"k": "x"}), Vector("b", [0.0, 1.0])])
    return index


def test_query_answers_by_vector_and_by_id(flaky: tuple[ServerForTests, FlakyQueries]) -> None:
    running, _ = flaky
    index = _filled(running.client())
    found = index.query([1.0, 0.1], top_k=2, return_metadata="all")
    assert [m.id for m in found.matches] == ["a", "b"] and found.count == 2 and found.matches[0].metadata == {"k": "x"}
    assert isinstance(found.matches[0].score, float)
    assert [m.id for m in index.query_by_id("b", top_k=1).matches] == ["b"]


@pytest.mark.parametrize("status", [429, 503])
def test_transient_query_failures_are_retried(flaky: tuple[ServerForTests, FlakyQueries], status: int) -> None:
    running, gate = flaky
    slept: list[float] = []
    index = _filled(running.client(sleep=slept.append, rng=random.Random(1), backoff=Backoff(attempts=4, base_s=0.5, cap_s=8.0)))
    gate.status, gate.left = status, 2
    assert [m.id for m in index.query([1.0, 0.0], top_k=1).matches] == ["a"]
    assert len(slept) == 2 and gate.queries == 3
    gate.left = 10
    with pytest.raises(VectorizeUnavailable, match=r"^VECTOR_QUERY_ERROR \(code = 10001\): busy") as gave_up:
        index.query([1.0, 0.0])
    assert gave_up.value.status == status


def test_input_errors_are_not_retried(flaky: tuple[ServerForTests, FlakyQueries]) -> None:
    running, gate = flaky
    slept: list[float] = []
    index = _filled(running.client(sleep=slept.append))
    before = gate.queries
    with pytest.raises(VectorizeInputError, match=r"\(code = 40006\): invalid query vector, expected 2 dimensions, and got 3 dimensions") as wrong:
        index.query([1.0, 0.0, 0.0])
    assert wrong.value.status == 400 and slept == [] and gate.queries == before + 1


def test_an_unreachable_server_fails_the_query_as_unavailable(flaky: tuple[ServerForTests, FlakyQueries]) -> None:
    running, _ = flaky
    _filled(running.client(account_id="acc"))
    slept: list[float] = []
    client = CloudflareClient("acc", "t", f"http://127.0.0.1:{free_port()}/client/v4", sleep=slept.append, timeout_s=2)
    from memory_sim.cloudflare.vectorize import CloudflareVectorizeIndex

    with pytest.raises(VectorizeUnavailable, match="Connection"):
        CloudflareVectorizeIndex(client, "mem").query([1.0, 0.0])
    assert len(slept) == 3


def test_an_injected_sdk_is_used_for_queries() -> None:
    import cloudflare

    answer = b'{"success":true,"errors":[],"messages":[],"result":{"count":1,"matches":[{"id":"z","score":0.5}]}}'
    seen: list[bytes] = []

    def reply(request: httpx.Request) -> httpx.Response:
        seen.append(request.content)
        return httpx.Response(200, content=answer, headers={"content-type": "application/json"})

    sdk = cloudflare.Cloudflare(api_token="t", base_url="http://mock/client/v4", max_retries=0,
                                http_client=httpx.Client(transport=httpx.MockTransport(reply)))
    from memory_sim.cloudflare.vectorize import CloudflareVectorizeIndex

    found = CloudflareVectorizeIndex(CloudflareClient("a", "t", sdk=sdk), "mem").query([0.5, 0.25], top_k=1)
    assert [m.id for m in found.matches] == ["z"] and b'"vector":[0.5,0.25]' in seen[0] and b'"topK":1' in seen[0]


def test_the_adapter_sends_what_workerds_binding_sends() -> None:
    """`{...options, vector}` or `{...options, vectorId}`, never both; `true` converted to 'all', `false` sent as it is
    (the service refuses it: tests/vectorize/test_contract.py), other values refused before anything is sent."""
    import cloudflare
    import orjson

    answer = b'{"success":true,"errors":[],"messages":[],"result":{"count":0,"matches":[]}}'
    seen: list[Any] = []

    def reply(request: httpx.Request) -> httpx.Response:
        seen.append(orjson.loads(request.content))
        return httpx.Response(200, content=answer, headers={"content-type": "application/json"})

    sdk = cloudflare.Cloudflare(api_token="t", base_url="http://mock/client/v4", max_retries=0,
                                http_client=httpx.Client(transport=httpx.MockTransport(reply)))
    from memory_sim.cloudflare.vectorize import CloudflareVectorizeIndex

    index = CloudflareVectorizeIndex(CloudflareClient("a", "t", sdk=sdk), "mem")
    index.query_by_id("b", top_k=2, return_metadata=True)
    index.query([0.5], return_metadata=False, namespace="ns")
    index.query([0.5])
    assert seen == [{"topK": 2, "returnValues": False, "returnMetadata": "all", "vectorId": "b"},
                    {"topK": 5, "returnValues": False, "returnMetadata": False, "namespace": "ns", "vector": [0.5]},
                    {"topK": 5, "returnValues": False, "returnMetadata": "none", "vector": [0.5]}]
    with pytest.raises(VectorizeInputError, match='Invalid returnMetadata option.*got: some$'):
        index.query([0.5], return_metadata="some")
    assert len(seen) == 3
