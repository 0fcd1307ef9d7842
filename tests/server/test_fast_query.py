"""The query route answered inside uvicorn's HTTP protocol (protocol.py, fast_query.QueryAnswerer): the same answers
as the FastAPI route, behind the token gate, errors in the envelope, HTTP/1.1 kept intact (pipelining, bodies in
pieces, keep-alive, Connection: close), the access log, and still described in the OpenAPI document."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from pathlib import Path
from typing import Any, Iterator

import cloudflare
import httpx
import orjson
import pytest

from memory_sim.builder.server import build_server_app
from memory_sim.server.fast_query import QUERY_PATH, QueryAnswerer
from memory_sim.server.loopback import LoopbackServer
from memory_sim.server.protocol import server_config
from memory_sim.testing import TEST_TOKEN

BODY = {"vector": [1, 0, 0], "topK": 2, "returnMetadata": "all"}
ROWS = b'{"id":"a","values":[1,0,0],"metadata":{"k":1}}\n{"id":"b","values":[0,1,0]}\n'
BODIES: list[Any] = [BODY, {"vectorId": "b", "topK": 1}, {"vector": [1, 0]}, [1, 2], {"vector": [1, 0, 0], "filter": {"k": 1}}]
AUTH = {"Authorization": f"Bearer {TEST_TOKEN}"}
INDEXES = "/client/v4/accounts/acc/vectorize/v2/indexes"


class CountingAnswerer(QueryAnswerer):
    """Counts the queries the protocol answered itself (the FastAPI route does not call the answerer)."""

    calls = 0

    def __call__(self, account_id: str, name: str, authorization: str, body: bytes) -> tuple[int, bytes]:
        self.calls += 1
        return super().__call__(account_id, name, authorization, body)


def _filled_app(folder: Path) -> Any:
    app = build_server_app(folder, TEST_TOKEN, d1_engine="sqlite")
    app.state.query_answer = CountingAnswerer(app.state.accounts, [TEST_TOKEN])

    async def fill() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), headers=AUTH) as client:
            await client.post(f"http://test{INDEXES}", json={"name": "mem", "config": {"dimensions": 3, "metric": "cosine"}})
            await client.post(f"http://test{INDEXES}/mem/upsert", content=ROWS)

    asyncio.run(fill())
    return app


REQUESTS: list[tuple[str, dict[str, str], Any]] = [("mem", AUTH, body) for body in BODIES] + [
    ("mem", {}, BODY), ("mem", {"Authorization": "Bearer nope"}, BODY), ("nothere", AUTH, BODY)]


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


def test_protocol_answers_as_the_route(served: tuple[Any, str]) -> None:
    app, origin = served
    with httpx.Client(base_url=origin) as client:
        fast = _replies(client)
    assert app.state.query_answer.calls == len(REQUESTS)  # every one answered inside the protocol

    async def routed() -> list[tuple[int, Any]]:  # the same app in-process: FastAPI's route, no protocol
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
            out = []
            for name, headers, body in REQUESTS:
                reply = await client.post(f"{INDEXES}/{name}/query", json=body, headers=headers)
                out.append((reply.status_code, reply.json()))
            return out

    assert asyncio.run(routed()) == fast
    assert [status for status, _ in fast] == [200, 200, 400, 400, 400, 401, 403, 404]
    assert [m["id"] for m in fast[0][1]["result"]["matches"]] == ["a", "b"] and fast[0][1]["result"]["matches"][0]["metadata"] == {"k": 1}
    assert [body["errors"][0]["code"] for _, body in fast[5:]] == [10000, 9109, 40013]


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
            time.sleep(0.02)  # separate TCP segments: the protocol sees the request in several callbacks
        (status, answer), = _read_responses(sock, 1)
    assert status == 200 and [m["id"] for m in orjson.loads(answer)["result"]["matches"]] == ["b"]
    assert app.state.query_answer.calls == 1


@pytest.mark.parametrize("version, extra", [("1.1", "Connection: close\r\n"), ("1.0", "")])
def test_closing_requests_take_the_ordinary_path(served: tuple[Any, str], version: str, extra: str) -> None:
    app, origin = served
    with socket.create_connection(("127.0.0.1", _port(origin))) as sock:
        sock.sendall(_request(f"{INDEXES}/mem/query", orjson.dumps({"vector": [1, 0, 0], "topK": 1}), version=version, extra=extra))
        (status, answer), = _read_responses(sock, 1)
        sock.settimeout(10)
        assert sock.recv(1) == b""  # the server closed the connection, as asked
    assert status == 200 and orjson.loads(answer)["result"]["matches"][0]["id"] == "a"
    assert app.state.query_answer.calls == 0  # FastAPI's route answered


def test_keep_alive_reuses_one_socket(served: tuple[Any, str]) -> None:
    app, origin = served
    sdk = cloudflare.Cloudflare(api_token=TEST_TOKEN, base_url=f"{origin}/client/v4", max_retries=0)
    seen = set()
    for i in range(20):
        reply = sdk.vectorize.indexes.with_raw_response.query("mem", account_id="acc", vector=[1, 0, i], top_k=1)
        seen.add(reply.http_response.extensions["network_stream"].get_extra_info("client_addr"))
        assert reply.parse().matches[0].id == "a"
    sdk.close()
    assert len(seen) == 1 and app.state.query_answer.calls == 20


def test_access_log_names_fast_queries(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    app = _filled_app(tmp_path)
    with caplog.at_level(logging.INFO, logger="uvicorn.access"):
        with LoopbackServer(app, access_log=True, log_config=None, log_level="info") as running:
            httpx.post(f"{running.base_url}/accounts/acc/vectorize/v2/indexes/mem/query", json=BODY, headers=AUTH)
    app.state.accounts.close()
    lines = [r.getMessage() for r in caplog.records if r.name == "uvicorn.access"]
    assert any('"POST /client/v4/accounts/acc/vectorize/v2/indexes/mem/query HTTP/1.1" 200' in line for line in lines), lines


def test_server_config_uses_the_protocol_only_for_the_app() -> None:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    async def bare(scope: Any, receive: Any, send: Any) -> None:
        return None

    assert server_config(bare).http == "auto"  # no answerer: uvicorn's own choice
    app = build_server_app(Path("/nonexistent-never-written"), TEST_TOKEN, d1_engine="sqlite")
    chosen = server_config(app).http
    assert isinstance(chosen, type) and issubclass(chosen, HttpToolsProtocol)
    assert server_config(app, http="h11").http == "h11"  # an explicit choice wins
    app.add_middleware(CountingMiddleware)
    assert server_config(app).http == "auto"  # added middleware must see the queries: served the ordinary way


class CountingMiddleware:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def test_typed_sdk_query_and_openapi(sdk: cloudflare.Cloudflare, account_id: str) -> None:
    sdk.vectorize.indexes.create(account_id=account_id, name="mem", config={"dimensions": 3, "metric": "cosine"})
    httpx.post(f"{sdk.base_url}accounts/{account_id}/vectorize/v2/indexes/mem/upsert", content=ROWS,
               headers={**AUTH, "Content-Type": "application/x-ndjson"}).raise_for_status()
    found = sdk.vectorize.indexes.query("mem", account_id=account_id, vector=[0, 1, 0], top_k=1)
    assert found is not None and found.count == 1 and found.matches[0].id == "b"
    with pytest.raises(cloudflare.NotFoundError) as missing:
        sdk.vectorize.indexes.query("nothere", account_id=account_id, vector=[1, 0, 0])
    assert missing.value.body["errors"][0]["code"] == 40013 and missing.value.body["success"] is False
    spec = httpx.get(f"{sdk.base_url}".replace("/client/v4/", "/openapi.json")).json()
    assert any(QUERY_PATH.match(path.replace("{account_id}", "x").replace("{name}", "y")) for path in spec["paths"])
    assert QUERY_PATH.match("/client/v4/accounts/a/vectorize/v2/indexes/mem/query")
    assert not QUERY_PATH.match("/client/v4/accounts/a/vectorize/v2/indexes/mem/query/extra")
