"""How `memory-sim serve` and the loopback test servers run uvicorn: its httptools HTTP protocol, with the Vectorize
query route answered inside the parser's callbacks.

Measured with the official SDK's typed query through the server (docs/server.md, "Speed"): uvicorn hands every
request to the ASGI app as a new asyncio task with message dicts, receive/send awaits and the framework's wrapper
stack; for the query route that machinery cost ~0.2 ms of a ~2 ms round trip on the 2-core machine here. So the
protocol reads that one route's body itself and writes the answer `QueryAnswerer` gives, synchronously, in the
callback that completes the request. An app with middleware added beyond its own token gate and error net is
served the ordinary way throughout. Anything unusual (pipelined requests still waiting, `Connection: close`,
HTTP/1.0, `Expect: 100-continue`, a percent-encoded path, a paused socket, a concurrency limit) takes uvicorn's
ordinary path to the FastAPI route, which runs the same `run_query`.

This subclasses uvicorn's `HttpToolsProtocol` and relies on its parser callbacks and on `on_response_complete`
(keep-alive timer, flow control): pyproject pins uvicorn to 0.30-0.54 (same callbacks; 0.54 is what the tests run), and `server_config` falls
back to uvicorn's own protocol when httptools is missing or the app has no `QueryAnswerer`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import uvicorn

from memory_sim.server.auth import TokenGate, authorization
from memory_sim.server.envelope import InternalErrors
from memory_sim.server.fast_query import QUERY_PATH, QueryAnswerer

Answer = Callable[[str, str, str, bytes], tuple[int, bytes]]


def fast_query_protocol(answer: Answer) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol class, answering `QUERY_PATH` POSTs with `answer` and the rest as usual."""
    from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

    class FastQueryProtocol(HttpToolsProtocol):
        _query: tuple[str, str, list[bytes]] | None = None  # (account id, index name, body parts) being read

        def on_headers_complete(self) -> None:
            taken = self._fast_route()
            if taken is None:
                super().on_headers_complete()
                return
            self._query = (*taken, [])

        def _fast_route(self) -> tuple[str, str] | None:
            """The (account id, index name) of a query this protocol answers itself, or None."""
            parser = self.parser
            if parser.get_method() != b"POST" or parser.get_http_version() != "1.1" or not parser.should_keep_alive():
                return None
            if (self.cycle is not None and not self.cycle.response_complete) or self.pipeline:
                return None  # answers must leave in request order: an earlier one is still being served
            if self.expect_100_continue or self.flow.write_paused or self.limit_concurrency is not None:
                return None
            path = self.url.partition(b"?")[0]
            if b"%" in path or parser.should_upgrade():
                return None
            matched = QUERY_PATH.match(path.decode("ascii", "replace"))
            return None if matched is None else (matched[1], matched[2])

        def on_body(self, body: bytes) -> None:
            if self._query is None:
                super().on_body(body)
                return
            self._query[2].append(body)

        def on_message_complete(self) -> None:
            if self._query is None:
                super().on_message_complete()
                return
            account_id, name, parts = self._query
            self._query = None
            status, payload = answer(account_id, name, authorization(self.headers), b"".join(parts))
            self._write(status, payload)
            self.on_response_complete()  # uvicorn's: counts the request, arms the keep-alive timer

        def _write(self, status: int, payload: bytes) -> None:
            head = [STATUS_LINE[status]]
            for header, value in self.server_state.default_headers:  # `date`, `server`, as on every other route
                head += [header, b": ", value, b"\r\n"]
            head.append(b"content-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(payload))
            self.transport.write(b"".join(head) + payload)
            if self.access_log:
                client = "%s:%d" % self.client if self.client else ""
                path = self.url.decode("ascii", "replace")
                self.access_logger.info('%s - "%s %s HTTP/%s" %d', client, "POST", path, "1.1", status)

    return FastQueryProtocol


def server_config(app: Any, **options: Any) -> uvicorn.Config:
    """uvicorn's config for `app` (options as `uvicorn.Config` takes them), with the fast query protocol when the
    app carries a `QueryAnswerer` (`app.state.query_answer`), has no middleware but its own (token gate, error net;
    middleware added later, for tracing or fault injection, must see the queries too) and httptools is installed."""
    answer = getattr(getattr(app, "state", None), "query_answer", None)
    own_stack = all(m.cls in (TokenGate, InternalErrors) for m in getattr(app, "user_middleware", []))
    if isinstance(answer, QueryAnswerer) and own_stack and "http" not in options and _has_httptools():
        options["http"] = fast_query_protocol(answer)
    return uvicorn.Config(app, **options)


def _has_httptools() -> bool:
    try:
        import httptools  # noqa: F401
    except ImportError:
        return False
    return True
