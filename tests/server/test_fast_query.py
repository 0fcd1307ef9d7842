"""The query route answered before FastAPI's routing (fast_query.QueryRoute, a plain ASGI middleware): the same
answers as the FastAPI route, behind the token check, errors in the envelope, HTTP/1.1 kept intact by uvicorn
(pipelining across both paths, bodies in pieces, keep-alive, Connection: close), middleware added later still
sees queries, and the route is still described in the OpenAPI document."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path
from typing import Any, Iterator

import cloudflare
import httpx
import orjson
import pytest

from memory_sim.builder.server import build_server_app
from memory_sim.server.fast_query import QUERY_PATH, QueryRoute
from memory_sim.server.loopback import LoopbackServer
from memory_sim.testing import TEST_TOKEN

BODY = {"vector": [1, 0, 0], "topK": 2, "returnMetadata": "all"}
ROWS = b'{"id":"a","values":[1,0,0],"metadata":{"k":1}}\n{"id":"b","values":[0,1,0]}\n'
BODIES: list[Any] = [BODY, {"vectorId": "b", "topK": 1}, {"vector": [1, 0]}, [1, 2], {"vector": [1, 0, 0], "filter": {"k": 1}},
                     {"vector": [1, 0, 0], "vectorId": "b"}, {"vector": [1, 0, 0], "returnMetadata": True}]
AUTH = {"Authorization": f"Bearer {TEST_TOKEN}"}
INDEXES = "/client/v4/accounts/acc/vectorize/v2/indexes"


def _filled_app(folder: Path, *, fast_query: bool = True) -> Any:
    app = build_server_app(folder, TEST_TOKEN, d1_engine="sqlite", fast_query=fast_query)

    async def fill() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), headers=AUTH) as client:
            await client.post(f"http://test{INDEXES}", json={"name": "mem", "config": {"dimensions": 3, "metric": "cosine"}})
            await client.post(f"http://test{INDEXES}/mem/upsert", content=ROWS)

    asyncio.run(fill())
    return app


REQUESTS: list[tuple[str, dict[str, str], Any]] = [("mem", AUTH, body) for body in BODIES] + [
    ("mem", {}, BODY), ("mem", {"Authorization": "Bearer nope"}, BODY), ("nothere", AUTH, BODY), ("m%65m", AUTH, BODY)]


def _replies(client: httpx.Client) -> list[tuple[int, Any]]:
    out = []
    for name, headers, body in REQUESTS:
        reply = client.post(f"{INDEXES}/{name}/query", json=body, headers=headers)
        out.append((reply.status_code, reply.json()))
    return out


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Any, str]]:
    app = _filled_app(tmp_path)
    with LoopbackServer(app) as running:
        yield app, running.base_url.removesuffix("/client/v4")
    app.state.accounts.close()


def test_fast_path_answers_as_the_fastapi_route(served: tuple[Any, str], tmp_path: Path) -> None:
    app, origin = served
    assert any(m.cls is QueryRoute for m in app.user_middleware)
    with httpx.Client(base_url=origin) as client:
        fast = _replies(client)
    routed_app = _filled_app(tmp_path / "routed", fast_query=False)  # the same data, served by FastAPI's route only
    assert not any(m.cls is QueryRoute for m in routed_app.user_middleware)
    with LoopbackServer(routed_app) as running, httpx.Client(base_url=running.base_url.removesuffix("/client/v4")) as client:
        routed = _replies(client)
    routed_app.state.accounts.close()
    assert routed == fast
    assert [status for status, _ in fast] == [200, 200, 400, 400, 400, 400, 400, 401, 403, 404, 200]
    assert [m["id"] for m in fast[0][1]["result"]["matches"]] == ["a", "b"] and fast[0][1]["result"]["matches"][0]["metadata"] == {"k": 1}
    assert [body["errors"][0]["code"] for _, body in fast[5:10]] == [40020, 40026, 10000, 9109, 3000]
    assert all(body["success"] is False and body["result"] is None for _, body in fast[2:10])


def test_middleware_added_later_sees_queries(tmp_path: Path) -> None:
    app = build_server_app(tmp_path, TEST_TOKEN, d1_engine="sqlite")
    seen: list[str] = []

    class Recorder:  # what a tracing or fault-injecting middleware added after build_server_app does
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                seen.append(scope["path"])
            await self.inner(scope, receive, send)

    app.add_middleware(Recorder)
    with LoopbackServer(app) as running, httpx.Client(base_url=running.base_url.removesuffix("/client/v4"), headers=AUTH) as client:
        client.post(INDEXES, json={"name": "mem", "config": {"dimensions": 3, "metric": "cosine"}}).raise_for_status()
        client.post(f"{INDEXES}/mem/upsert", content=ROWS).raise_for_status()
        reply = client.post(f"{INDEXES}/mem/query", json=BODY)
    app.state.accounts.close()
    assert reply.status_code == 200 and seen == [INDEXES, f"{INDEXES}/mem/upsert", f"{INDEXES}/mem/query"]


def _request(path: str, body: bytes, *, method: str = "POST", version: str = "1.1", extra: str = "") -> bytes:
    head = f"{method} {path} HTTP/{version}\r\nHost: x\r\nAuthorization: Bearer {TEST_TOKEN}\r\n{extra}"
    return (head + f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


def _read_responses(sock: socket.socket, count: int, timeout_s: float = 10.0) -> list[tuple[int, bytes]]:
    """`count` HTTP/1.1 responses read off one socket, in order (each with a Content-Length)."""
    buffer, out, deadline = b"", [], time.monotonic() + timeout_s
    sock.settimeout(timeout_s)
    while len(out) < count and time.monotonic() < deadline:
        head_end = buffer.find(b"\r\n\r\n")
        if head_end >= 0:
            head = buffer[:head_end].decode("latin-1").split("\r\n")
            length = next(int(line.split(":")[1]) for line in head if line.lower().startswith("content-length:"))
            if len(buffer) >= head_end + 4 + length:
                out.append((int(head[0].split()[1]), buffer[head_end + 4: head_end + 4 + length]))
                buffer = buffer[head_end + 4 + length:]
                continue
        chunk = sock.recv(65536)
        if not chunk:
            break
        buffer += chunk
    return out


def _port(origin: str) -> int:
    return int(origin.rsplit(":", 1)[1])


def test_pipelined_requests_are_answered_in_order(served: tuple[Any, str]) -> None:
    app, origin = served
    query = f"{INDEXES}/mem/query"
    batch = (_request(query, orjson.dumps({"vector": [1, 0, 0], "topK": 1}))
             + _request("/health", b"", method="GET")
             + _request(query, orjson.dumps({"vector": [0, 1, 0], "topK": 1}))
             + _request(f"{INDEXES}/mem", b"", method="GET")  # a routed request, then a query pipelined behind it
             + _request(query, orjson.dumps({"vector": [1, 0, 0], "topK": 2})))
    with socket.create_connection(("127.0.0.1", _port(origin))) as sock:
        sock.sendall(batch)
        replies = _read_responses(sock, 5)
    assert [status for status, _ in replies] == [200] * 5
    bodies = [orjson.loads(body) for _, body in replies]
    assert [m["id"] for m in bodies[0]["result"]["matches"]] == ["a"]
    assert bodies[1]["result"] == {"status": "ok"}
    assert [m["id"] for m in bodies[2]["result"]["matches"]] == ["b"]
    assert bodies[3]["result"]["name"] == "mem"
    assert [m["id"] for m in bodies[4]["result"]["matches"]] == ["a", "b"]


def test_a_body_in_pieces_and_a_query_string(served: tuple[Any, str]) -> None:
    app, origin = served
    body = orjson.dumps({"vector": [0, 1, 0], "topK": 1})
    raw = _request(f"{INDEXES}/mem/query?trace=1", body)
    with socket.create_connection(("127.0.0.1", _port(origin))) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        cut = len(raw) - len(body)
        for piece in (raw[:20], raw[20:cut], body[:5], body[5:]):
            sock.sendall(piece)
            time.sleep(0.02)  # separate TCP segments: the server reads the request in several pieces
        (status, answer), = _read_responses(sock, 1)
    assert status == 200 and [m["id"] for m in orjson.loads(answer)["result"]["matches"]] == ["b"]


@pytest.mark.parametrize("version, extra", [("1.1", "Connection: close\r\n"), ("1.0", "")])
def test_closing_requests_are_answered_then_closed(served: tuple[Any, str], version: str, extra: str) -> None:
    app, origin = served
    with socket.create_connection(("127.0.0.1", _port(origin))) as sock:
        sock.sendall(_request(f"{INDEXES}/mem/query", orjson.dumps({"vector": [1, 0, 0], "topK": 1}), version=version, extra=extra))
        (status, answer), = _read_responses(sock, 1)
        sock.settimeout(10)
        assert sock.recv(1) == b""  # the server closed the connection, as asked
    assert status == 200 and orjson.loads(answer)["result"]["matches"][0]["id"] == "a"


def test_keep_alive_reuses_one_socket(served: tuple[Any, str]) -> None:
    app, origin = served
    sdk = cloudflare.Cloudflare(api_token=TEST_TOKEN, base_url=f"{origin}/client/v4", max_retries=0)
    seen = set()
    for i in range(20):
        reply = sdk.vectorize.indexes.with_raw_response.query("mem", account_id="acc", vector=[1, 0, i], top_k=1)
        seen.add(reply.http_response.extensions["network_stream"].get_extra_info("client_addr"))
        assert reply.parse().matches[0].id == "a"
    sdk.close()
    assert len(seen) == 1


def test_typed_sdk_query_and_openapi(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    sdk.vectorize.indexes.create(account_id=account_id, name="mem", config={"dimensions": 3, "metric": "cosine"})
    httpx.post(f"{sdk.base_url}accounts/{account_id}/vectorize/v2/indexes/mem/upsert", content=ROWS,
               headers={**AUTH, "Content-Type": "application/x-ndjson"}).raise_for_status()
    found = sdk.vectorize.indexes.query("mem", account_id=account_id, vector=[0, 1, 0], top_k=1)
    assert found is not None and found.count == 1 and found.matches[0].id == "b"
    with pytest.raises(cloudflare.NotFoundError) as missing:
        sdk.vectorize.indexes.query("nothere", account_id=account_id, vector=[1, 0, 0])
    assert missing.value.body["errors"][0]["code"] == 3000 and missing.value.body["success"] is False
    spec = httpx.get(f"{sdk.base_url}".replace("/client/v4/", "/openapi.json")).json()
    assert any(QUERY_PATH.match(path.replace("{account_id}", "x").replace("{name}", "y")) for path in spec["paths"])
    assert QUERY_PATH.match("/client/v4/accounts/a/vectorize/v2/indexes/mem/query")
    assert not QUERY_PATH.match("/client/v4/accounts/a/vectorize/v2/indexes/mem/query/extra")
