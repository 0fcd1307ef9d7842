"""The HTTP transport under the Cloudflare adapter, bounded: every request has a total deadline (connect, send,
headers and body together, not per read: a server sending a byte every 5 s stops it too), an answer has a size
cap, and a redirect to another origin is refused before it is followed (a 307 would re-send the body there).

Built from public seams of the libraries: an httpx transport (`httpx.BaseTransport`) over httpcore's connection
pool with its own network backend (`httpcore.NetworkBackend`), whose reads and writes get at most the time left
before the request's deadline; and an httpx response hook for redirects. The SDK maps the errors raised here into
its own (`APITimeoutError`, `APIConnectionError`); `client.failure_of` turns them into one line.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

_EXCEPTIONS: tuple[tuple[type[Exception], type[Exception]], ...] = (  # most specific first
    (httpcore.ConnectTimeout, httpx.ConnectTimeout), (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout), (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.ConnectError, httpx.ConnectError), (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError), (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError), (httpcore.ProtocolError, httpx.ProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol), (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.NetworkError, httpx.NetworkError),
)


class AnswerTooLarge(httpx.TransportError):
    """The answer is larger than the cap: not read further, not retried."""


class CrossOriginRedirect(httpx.TransportError):
    """The server redirected to another origin: not followed, so neither the token nor the body goes there."""


class _Deadline(threading.local):
    at: float | None = None


_deadline = _Deadline()  # the request of this thread: reads and writes happen in the thread that sent it


def _bounded(timeout: float | None) -> float | None:
    """The time an I/O step may take: its own timeout, cut to what is left of the request's deadline."""
    if _deadline.at is None:
        return timeout
    left = _deadline.at - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the request ran past its deadline")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _bounded(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_tcp(host, port, _bounded(timeout), local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, _bounded(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _mapped(exc: Exception) -> Exception:
    for source, target in _EXCEPTIONS:
        if isinstance(exc, source):
            return target(str(exc) or type(exc).__name__)
    return exc


class _Body(httpx.SyncByteStream):
    """The answer's body, counted as it is read: past the cap, reading stops."""

    def __init__(self, inner: Iterable[bytes], closer: Any, cap: int) -> None:
        self._inner, self._closer, self._cap = inner, closer, cap

    def __iter__(self) -> Iterator[bytes]:
        size = 0
        try:
            for chunk in self._inner:
                size += len(chunk)
                if size > self._cap:
                    raise AnswerTooLarge(f"the answer is larger than {self._cap:,} bytes: not read further")
                yield chunk
        except httpcore.TimeoutException as exc:
            raise _mapped(exc) from exc
        except Exception as exc:
            mapped = _mapped(exc)
            if mapped is exc:
                raise
            raise mapped from exc

    def close(self) -> None:
        self._closer()


class BoundedTransport(httpx.BaseTransport):
    """`httpx.HTTPTransport`'s job (HTTP/1.1 over a keep-alive pool) with a total deadline per request and a cap
    on the answer's size."""

    def __init__(self, *, deadline_s: float, max_answer_bytes: int, limits: httpx.Limits | None = None) -> None:
        limits = limits or httpx.Limits(max_connections=100, max_keepalive_connections=20)
        self.deadline_s, self.max_answer_bytes = deadline_s, max_answer_bytes
        self._pool = httpcore.ConnectionPool(
            max_connections=limits.max_connections, max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry, network_backend=_Backend())

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        _deadline.at = time.monotonic() + self.deadline_s  # kept for the body, read after this returns
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port,
                             target=request.url.raw_path),
            headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        try:
            answer = self._pool.handle_request(core)
        except Exception as exc:
            mapped = _mapped(exc)
            if mapped is exc:
                raise
            raise mapped from exc
        declared = next((value for name, value in answer.headers if name.lower() == b"content-length"), b"")
        if declared.isdigit() and int(declared) > self.max_answer_bytes:
            answer.close()
            raise AnswerTooLarge(f"the answer is larger than {self.max_answer_bytes:,} bytes "
                                 f"({int(declared):,} announced): not read")
        stream: Any = answer.stream
        return httpx.Response(status_code=answer.status, headers=answer.headers,
                              stream=_Body(stream, answer.close, self.max_answer_bytes), extensions=answer.extensions)

    def close(self) -> None:
        self._pool.close()


def refuse_cross_origin_redirects(response: httpx.Response) -> None:
    """An httpx response hook: a redirect is followed only within the origin the request went to."""
    if not response.has_redirect_location:
        return
    target = response.request.url.join(response.headers["location"])
    source = response.request.url
    if (target.scheme, target.host, target.port) != (source.scheme, source.host, source.port):
        response.close()
        raise CrossOriginRedirect(f"the server at {source.scheme}://{source.netloc.decode()} redirected to "
                                  f"another origin ({target.scheme}://{target.netloc.decode()}): not followed")
