"""Run an app on a free loopback port in a background thread: for tests, benchmarks and `push` checks.

`with LoopbackServer(app) as server: server.base_url` -> "http://127.0.0.1:PORT/client/v4". Uvicorn serves in a
real thread of this process, so in-process state (an injected clock, an adopted account) stays reachable. It is
configured as `memory-sim serve` is (uvicorn's standard config). `wait_until_serving` waits for a server started
in a process of its own (`memory-sim serve` on `free_port()`) to answer.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def wait_until_serving(
    port: int, process: subprocess.Popen[Any], *, timeout_s: float = 60.0, host: str = "127.0.0.1"
) -> httpx.Response:
    """The first answer of `GET /health` from a server starting in `process`; RuntimeError when the process exits
    before answering, or when nothing answers within `timeout_s`."""
    import httpx

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return httpx.get(f"http://{host}:{port}/health", timeout=1)
        except httpx.TransportError:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited ({process.returncode}) before it answered") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not answer on port {port} within {timeout_s:g} s") from None
            time.sleep(0.1)  # waiting for a real process to bind its port


class LoopbackServer:
    def __init__(
        self, app: Any, *, host: str = "127.0.0.1", port: int | None = None, start_timeout_s: float = 30.0,
        sock: socket.socket | None = None, **uvicorn_options: Any
    ) -> None:
        """`sock`: a socket already bound and listening (its port is the server's; connections made before the
        server starts wait in its backlog)."""
        if sock is not None:
            host, port = sock.getsockname()[:2]
        self.app, self.host, self.port = app, host, port or free_port(host)
        self._sock = sock
        from memory_sim.server.slow_requests import uvicorn_options as bounded

        self._options = {"log_level": "warning", "access_log": False, "lifespan": "on", **bounded(),
                         **uvicorn_options}
        self._timeout = start_timeout_s
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/client/v4"

    def start(self) -> LoopbackServer:
        import uvicorn

        self._server = uvicorn.Server(uvicorn.Config(self.app, host=self.host, port=self.port, **self._options))
        sockets = None if self._sock is None else [self._sock]
        self._thread = threading.Thread(
            target=self._server.run, args=(sockets,), name=f"loopback-{self.port}", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + self._timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the loopback server on port {self.port} did not start")
            time.sleep(0.01)  # waiting for a real server thread to bind its socket
        return self

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
