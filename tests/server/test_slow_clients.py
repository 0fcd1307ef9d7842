"""Slow or half-sent requests do not hold the server: a connection whose request head does not arrive within the
head timeout is closed (uvicorn alone keeps it for ever), also on a kept-alive connection, and so is one whose
body stalls or trickles, while complete requests are answered. Loopback only, bounded in count (500) and time;
the timeouts are injected (0.5 s for heads, 2 s for bodies) and the half-sent requests never complete, so the
verdict does not depend on the machine's speed."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import httpx
import pytest

from memory_sim.server.loopback import LoopbackServer
from memory_sim.server.slow_requests import BODY_IDLE_TIMEOUT_S, HEAD_TIMEOUT_S, bounded_protocol, uvicorn_options
from memory_sim.testing import TEST_TOKEN, ServerForTests


def _closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(65536) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _wait_closed(socks: list[socket.socket], bound_s: float) -> int:
    for sock in socks:
        sock.setblocking(False)
    open_ones = list(socks)
    deadline = time.monotonic() + bound_s
    while open_ones and time.monotonic() < deadline:
        open_ones = [s for s in open_ones if not _closed_by_server(s)]
        time.sleep(0.05)
    return len(open_ones)


@pytest.mark.timeout(120)
def test_500_half_sent_requests_are_closed_and_others_still_answered(tmp_path: object) -> None:
    with ServerForTests(tmp_path, d1_engine="sqlite") as base:  # type: ignore[arg-type]
        app = base.app
    with LoopbackServer(app, http=bounded_protocol(0.5)) as server:
        socks = []
        for n in range(500):
            sock = socket.create_connection((server.host, server.port))
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + str(n).encode())  # never ends
            socks.append(sock)
        answer = httpx.get(f"http://{server.host}:{server.port}/health", timeout=30)
        still_open = _wait_closed(socks, bound_s=60)
        for sock in socks:
            sock.close()
    assert answer.status_code == 200
    assert still_open == 0


@pytest.mark.timeout(60)
def test_a_second_request_left_half_sent_on_a_kept_alive_connection_is_closed(tmp_path: object) -> None:
    with ServerForTests(tmp_path, d1_engine="sqlite") as base:  # type: ignore[arg-type]
        app = base.app
    with LoopbackServer(app, http=bounded_protocol(0.5), timeout_keep_alive=30) as server:
        sock = socket.create_connection((server.host, server.port))
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = b""
        while b'"ok"' not in first:
            first += sock.recv(65536)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the blank line never comes
        assert _wait_closed([sock], bound_s=20) == 0
        sock.close()


def test_serve_and_loopback_servers_use_the_bounds() -> None:
    options = uvicorn_options()
    assert HEAD_TIMEOUT_S == 10.0 and BODY_IDLE_TIMEOUT_S == 10.0 and options["timeout_keep_alive"] == 5
    assert options["timeout_graceful_shutdown"] == 10 and options["h11_max_incomplete_event_size"] == 65536
    assert TEST_TOKEN


class BodyReader:
    """An app that reads each request's whole body before answering, and records how each read ended."""

    def __init__(self, wait_before_reading_s: float = 0.0) -> None:
        self.wait_before_reading_s = wait_before_reading_s
        self.ends: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await asyncio.sleep(self.wait_before_reading_s)  # the server holds what comes meanwhile (flow control)
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.ends.append("disconnect")
                return
            size += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        self.ends.append(f"read {size}")
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": str(size).encode()})


BODY_HEAD = b"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n"


@pytest.mark.timeout(120)
def test_a_body_that_stalls_or_trickles_is_cut_off() -> None:
    """The body idle limit is 2 s here; both connections must be closed by the server within 60 s (a bound for a
    hang, not a speed claim). The trickling one sends a byte every 0.2 s, so an idle timer alone never fires."""
    app = BodyReader()
    with LoopbackServer(app, http=bounded_protocol(HEAD_TIMEOUT_S, body_idle_s=2.0)) as server:
        stalled = socket.create_connection((server.host, server.port))
        stalled.sendall(BODY_HEAD + b"x" * 100)  # then nothing
        trickling = socket.create_connection((server.host, server.port))
        trickling.sendall(BODY_HEAD)
        trickling.setblocking(False)
        deadline, cut = time.monotonic() + 60, False
        while time.monotonic() < deadline and not cut:
            try:
                trickling.send(b"x")
            except OSError:
                cut = True
                break
            cut = _closed_by_server(trickling)
            time.sleep(0.2)
        stalled_open = _wait_closed([stalled], bound_s=60)
        stalled.close()
        trickling.close()
    assert cut, "the trickled body held its connection for 60 s"
    assert stalled_open == 0, "the stalled body held its connection for 60 s"
    assert app.ends == ["disconnect", "disconnect"]  # the application was let go of both


@pytest.mark.timeout(120)
def test_a_body_the_server_does_not_read_yet_is_not_the_clients_delay() -> None:
    """The app reads nothing for 3 s while a 4 MB body waits (uvicorn stops reading past 64 KiB): that pause is
    the server's, not a stalled client's, so the 2 s body limit does not cut the request off."""
    app = BodyReader(wait_before_reading_s=3.0)
    with LoopbackServer(app, http=bounded_protocol(HEAD_TIMEOUT_S, body_idle_s=2.0)) as server:
        answer = httpx.post(f"http://{server.host}:{server.port}/upload", content=b"x" * 4_000_000, timeout=60)
    assert answer.status_code == 200 and answer.text == "4000000"
    assert app.ends == ["read 4000000"]


def test_a_steady_body_is_read_whole() -> None:
    app = BodyReader()
    with LoopbackServer(app, http=bounded_protocol(HEAD_TIMEOUT_S, body_idle_s=2.0)) as server:
        sock = socket.create_connection((server.host, server.port))
        sock.sendall(b"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 30000\r\n\r\n")
        for _ in range(3):
            sock.sendall(b"x" * 10_000)
        sock.settimeout(60)
        answer = b""
        while b"30000" not in answer:
            piece = sock.recv(65536)
            assert piece, f"closed before answering: {answer!r}"
            answer += piece
        sock.close()
    assert answer.startswith(b"HTTP/1.1 200") and app.ends == ["read 30000"]
