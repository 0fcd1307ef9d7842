"""Slow or half-sent requests do not hold the server: a connection whose request head does not arrive within the
head timeout is closed (uvicorn alone keeps it for ever), also on a kept-alive connection, while complete
requests are answered. Loopback only, bounded in count (500) and time; the head timeout is injected (0.5 s) and
the half-sent requests never complete, so the verdict does not depend on the machine's speed."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from memory_sim.server.loopback import LoopbackServer
from memory_sim.server.slow_requests import HEAD_TIMEOUT_S, bounded_protocol, uvicorn_options
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
    assert HEAD_TIMEOUT_S == 10.0 and options["timeout_keep_alive"] == 5
    assert options["timeout_graceful_shutdown"] == 10 and options["h11_max_incomplete_event_size"] == 65536
    assert TEST_TOKEN
