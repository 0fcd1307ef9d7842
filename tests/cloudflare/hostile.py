"""HTTP servers on loopback that misbehave on purpose, each a raw socket in a thread: for the Cloudflare adapter's
bounds (tests/cloudflare/test_hostile_servers.py). Every server stops when its `with` block ends."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from types import TracebackType

Behaviour = Callable[[socket.socket, "HostileServer"], None]


class HostileServer:
    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.requests: list[bytes] = []  # the head and whatever body came with it, per connection
        self.stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.port = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/client/v4"

    def __enter__(self) -> HostileServer:
        accepting = threading.Thread(target=self._accept, daemon=True)
        accepting.start()
        self._threads.append(accepting)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(timeout=5)
        self._listener.close()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            worker = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            worker.start()
            self._threads.append(worker)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(60)  # a bound for a hang; these servers answer at once or by design never
            try:
                self.requests.append(read_request(conn))
                self.behaviour(conn, self)
            except OSError:
                pass  # the client gave up: what these servers are for


def read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(
        b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def dribble(conn: socket.socket, server: HostileServer) -> None:
    """A byte of the answer every 0.05 s, for ever: no single read ever waits long."""
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"x" * 10_000_000
    for byte in answer:
        if server.stop.is_set():
            return
        conn.sendall(bytes([byte]))
        time.sleep(0.05)


def endless_chunks(conn: socket.socket, server: HostileServer) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"[" * 65536
    while not server.stop.is_set():
        conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))


def huge_length(conn: socket.socket, server: HostileServer) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400000000\r\n\r\n{")
    server.stop.wait(5)


def not_json(conn: socket.socket, server: HostileServer) -> None:
    body = b"<html>502 Bad Gateway, but said with a 200</html>"
    # Connection: close: this server answers one request a connection, so a client must not send the next on it
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
                 % (len(body), body))


def redirect_to(target: str) -> Behaviour:
    def behaviour(conn: socket.socket, server: HostileServer) -> None:
        path = server.requests[-1].split(b" ")[1].decode()
        conn.sendall(f"HTTP/1.1 307 Temporary Redirect\r\nLocation: {target}{path}\r\nContent-Length: 0\r\n\r\n"
                     .encode())
    return behaviour
