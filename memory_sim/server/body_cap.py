"""A 413 at the door: no request body over `max_bytes` is read, on any route (the D1 upload URLs, `/transfers/`,
have their own, larger cap: transfers.py).

Cloudflare's edge refuses a request body over its plan's limit (100 MB on Free and Pro) with 413 before any API
sees it; here the same bound, in the API's envelope. A body announcing more (`Content-Length`) is refused before a
byte of it is read; one that does not announce its length (chunked) is counted as it is read and refused once past
the bound, so at most `max_bytes` plus one chunk is ever held.
"""

from __future__ import annotations

from typing import Any

from memory_sim.server.envelope import CODE_BAD_REQUEST, ApiError, fail

MAX_BODY_BYTES = 100 * 1000**2  # Cloudflare's request body limit on the Free and Pro plans: 100 MB
OWN_CAP_PREFIX = "/transfers/"


def too_large(max_bytes: int) -> ApiError:
    return ApiError(413, CODE_BAD_REQUEST, f"Request Entity Too Large: the body is over {max_bytes:,} bytes")


class BodyCap:
    """Plain ASGI middleware, outermost: refuses bodies over `max_bytes` with 413."""

    def __init__(self, app: Any, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"].startswith(OWN_CAP_PREFIX):
            await self.app(scope, receive, send)
            return
        refused = too_large(self.max_bytes)
        declared = next((v for k, v in scope["headers"] if k == b"content-length"), b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await fail(refused.status, refused.code, refused.message)(scope, receive, send)
            return
        received = 0
        started = False

        async def counted() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise refused
            return message

        async def watched(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except ApiError as exc:
            if exc is not refused or started:
                raise
            await fail(refused.status, refused.code, refused.message)(scope, receive, send)
