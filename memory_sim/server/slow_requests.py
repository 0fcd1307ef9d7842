"""Bounds on slow clients, for uvicorn: a request's head (request line and headers) must be in within
`HEAD_TIMEOUT_S` of the connection opening or of the previous answer, or the connection is closed; uvicorn
itself has no such timeout (its keep-alive timer stops at the first byte of a request, so a request left
half-sent holds its connection for ever). Its body, once the head is in, must keep coming: the connection is
closed when no byte of it arrives for `BODY_IDLE_TIMEOUT_S`, or when it arrives slower than `BODY_MIN_RATE`
bytes a second on average after that much time (a client that trickles a byte now and then would otherwise
reset an idle timer for ever). Time when the server is not reading (the application has not taken what came,
or the client awaits `100 Continue`) does not count. uvicorn's own settings do the rest (`uvicorn_options`):
idle kept-alive connections close after 5 s, a request head is at most 64 KiB, and a stopping server waits at
most 10 s for requests in flight.

The protocol is uvicorn's own ("auto": httptools where installed, else h11) with one timer around it; it reads
only what both implementations have as their ASGI cycle (`cycle`, set once a request's head is in, with
`more_body`, `response_complete` and `waiting_for_100_continue`) and flow control (`flow.read_paused`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

HEAD_TIMEOUT_S = 10.0
BODY_IDLE_TIMEOUT_S = 10.0
BODY_MIN_RATE = 1024.0  # bytes a second, on average, past the first BODY_IDLE_TIMEOUT_S of a body


@dataclass
class BodyPace:
    """How a request body is coming in: when the server began waiting for it, how much came, when the last."""

    idle_s: float
    min_rate: float
    started: float
    last: float
    received: int = 0

    def deadline(self) -> float:
        """When the connection is closed unless more of the body comes: `idle_s` after the last byte, and no
        later than the body's average pace allows (`min_rate` after a first `idle_s` of grace)."""
        return min(self.last + self.idle_s, self.started + self.idle_s + self.received / self.min_rate)

    def came(self, size: int, now: float) -> None:
        self.received += size
        self.last = now

    def restart(self, now: float) -> None:
        """The server was not reading (the client was not the one waiting): the pace is measured anew."""
        self.started = self.last = now
        self.received = 0


def bounded_protocol(
    head_timeout_s: float = HEAD_TIMEOUT_S, body_idle_s: float = BODY_IDLE_TIMEOUT_S,
    body_min_rate: float = BODY_MIN_RATE,
) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class, closing connections whose request head does not arrive in time, or whose
    body stalls or trickles (see the module's text)."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    class BoundedHead(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        _head_timer: asyncio.TimerHandle | None = None
        _cycle_before: Any = None
        _body_timer: asyncio.TimerHandle | None = None
        _body_cycle: Any = None  # the request whose body is being waited for
        _body_pace: BodyPace | None = None

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
            self._pace_body(len(data))

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            self._stop_body_timer()
            super().connection_lost(exc)

        def _start_head_timer(self) -> None:
            self._cycle_before = self.cycle
            self._head_timer = asyncio.get_running_loop().call_later(head_timeout_s, self._head_too_slow)

        def _head_too_slow(self) -> None:
            self._head_timer = None
            if self.cycle is self._cycle_before and not self.transport.is_closing():
                self.transport.close()

        def _awaiting_body(self) -> bool:
            cycle = self.cycle
            return cycle is not None and cycle.more_body and not cycle.response_complete

        def _pace_body(self, size: int) -> None:
            if not self._awaiting_body():
                self._stop_body_timer()
                return
            now = asyncio.get_running_loop().time()
            if self._body_cycle is not self.cycle or self._body_pace is None:
                self._stop_body_timer()
                self._body_cycle = self.cycle  # the head is in: the body's clock starts (what came with it is
                self._body_pace = BodyPace(body_idle_s, body_min_rate, now, now)  # not counted: mostly head)
            else:
                self._body_pace.came(size, now)
            if self._body_timer is None:
                self._arm_body_timer()

        def _arm_body_timer(self) -> None:
            assert self._body_pace is not None
            self._body_timer = asyncio.get_running_loop().call_at(self._body_pace.deadline(), self._body_check)

        def _body_check(self) -> None:
            """At the earliest deadline the body could have: closes the connection if it has passed, else waits
            for the next one (one timer a request, moved here rather than on every piece that arrives)."""
            self._body_timer = None
            pace = self._body_pace
            if pace is None or self.cycle is not self._body_cycle or not self._awaiting_body():
                return
            if self.transport.is_closing():
                return
            now = asyncio.get_running_loop().time()
            if self.flow.read_paused or self.cycle.waiting_for_100_continue:
                pace.restart(now)  # the server is the one not reading: not the client's time
            elif now >= pace.deadline():
                self.transport.close()  # the application's receive() answers http.disconnect
                return
            self._arm_body_timer()

        def _stop_body_timer(self) -> None:
            if self._body_timer is not None:
                self._body_timer.cancel()
                self._body_timer = None
            self._body_cycle, self._body_pace = None, None

    return BoundedHead


def uvicorn_options(head_timeout_s: float = HEAD_TIMEOUT_S, body_idle_s: float = BODY_IDLE_TIMEOUT_S) -> dict[str, Any]:
    """The settings `memory-sim serve` and every loopback server run uvicorn with."""
    return {"http": bounded_protocol(head_timeout_s, body_idle_s), "timeout_keep_alive": 5,
            "timeout_graceful_shutdown": 10, "h11_max_incomplete_event_size": 64 * 1024}
