"""Bearer tokens: every `/client/v4` route needs `Authorization: Bearer <token>` with one of the server's tokens.

Checked in one place for both ways a request is served: the ASGI middleware `TokenGate` (every route) and the
query route answered before FastAPI's routing (`fast_query.py`).
"""

from __future__ import annotations

import hmac
from typing import Any, Sequence

from memory_sim.server.envelope import CODE_AUTH_INVALID, CODE_AUTH_MISSING, ApiError, fail

API_PREFIX = "/client/v4"


def parse_tokens(value: str | Sequence[str] | None) -> list[str]:
    """Tokens from `--token` / MEMORY_SIM_API_TOKEN: several may be given, separated by commas."""
    raw = [value] if isinstance(value, str) else list(value or [])
    return [t.strip() for item in raw for t in item.split(",") if t.strip()]


def token_failure(header: str, tokens: Sequence[str]) -> ApiError | None:
    """Why an `Authorization` header is refused (401 missing, 403 not one of `tokens`), or None."""
    if not header:
        return ApiError(401, CODE_AUTH_MISSING, "Authentication error")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not any(hmac.compare_digest(token.strip(), t) for t in tokens):
        return ApiError(403, CODE_AUTH_INVALID, "Invalid access token")
    return None


def authorization(headers: Sequence[tuple[bytes, bytes]]) -> str:
    """The `Authorization` header of ASGI-style (lower-cased name, value) pairs; "" when absent."""
    return next((v for k, v in headers if k == b"authorization"), b"").decode("latin-1")


class TokenGate:
    """Every `/client/v4` request needs a bearer token. A plain ASGI middleware rather than a FastAPI dependency:
    resolving a dependency per request was a measurable share of the server's added latency."""

    def __init__(self, app: Any, tokens: Sequence[str]) -> None:
        self.app, self.tokens = app, list(tokens)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith(API_PREFIX):
            refused = token_failure(authorization(scope["headers"]), self.tokens)
            if refused is not None:
                await fail(refused.status, refused.code, refused.message)(scope, receive, send)
                return
        await self.app(scope, receive, send)
