"""Bounds on slow clients, for uvicorn: a request's head (request line and headers) must be in within
`HEAD_TIMEOUT_S` of the connection opening or of the previous answer, or the connection is closed; uvicorn
itself has no such timeout (its keep-alive timer stops at the first byte of a request, so a request left
half-sent holds its connection for ever). uvicorn's own settings do the rest (`uvicorn_options`): idle kept-alive
connections close after 5 s, a request head is at most 64 KiB, and a stopping server waits at most 10 s for
requests in flight.

The protocol is uvicorn's own ("auto": httptools where installed, else h11) with one timer around it; it reads
only what both implementations have as their documented ASGI cycle (`cycle`, set once a request's head is in).
"""

from __future__ import annotations

import asyncio
from typing import Any

HEAD_TIMEOUT_S = 10.0


def bounded_protocol(head_timeout_s: float = HEAD_TIMEOUT_S) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class, closing connections whose request head does not arrive in time."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    class BoundedHead(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        _head_timer: asyncio.TimerHandle | None = None
        _cycle_before: Any = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._start_head_timer()

        def data_received(self, data: bytes) -> None:
            if self._head_timer is None and (self.cycle is None or self.cycle.response_complete):
                self._start_head_timer()  # a new request begins on a kept-alive connection
            super().data_received(data)
            if self._head_timer is not None and self.cycle is not self._cycle_before:
                self._head_timer.cancel()  # the head is in: the request is the application's now
                self._head_timer = None

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            super().connection_lost(exc)

        def _start_head_timer(self) -> None:
            self._cycle_before = self.cycle
            self._head_timer = asyncio.get_running_loop().call_later(head_timeout_s, self._head_too_slow)

        def _head_too_slow(self) -> None:
            self._head_timer = None
            if self.cycle is self._cycle_before and not self.transport.is_closing():
                self.transport.close()

    return BoundedHead


def uvicorn_options(head_timeout_s: float = HEAD_TIMEOUT_S) -> dict[str, Any]:
    """The settings `memory-sim serve` and every loopback server run uvicorn with."""
    return {"http": bounded_protocol(head_timeout_s), "timeout_keep_alive": 5, "timeout_graceful_shutdown": 10,
            "h11_max_incomplete_event_size": 64 * 1024}
