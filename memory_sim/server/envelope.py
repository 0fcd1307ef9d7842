"""Cloudflare's v4 response envelope `{success, errors, messages, result}`, and the mapping of the project's
errors into it at the HTTP boundary.

Error codes: Vectorize errors carry their own codes (vectorize_validation.py); D1 answers SQL errors with 7500
and an unknown database with 7404; Workers AI bad input with 5006 and an unknown model with 5007; auth with
10000 "Authentication error" (no token: 401; a token on an account it does not open: 403, as Cloudflare answers
a token scoped to another account) and 9109 (a token the server does not know: 403); a path no route serves with
404 and 7003 "Could not route to <path>, perhaps your object identifier is invalid?" (Cloudflare's words), a
method the route does not take with 405 and 10405. Cloudflare does not publish a full table: where a code is not
seen in the wild it is this project's choice (UNCONFIRMED); 10405 is the code seen with Cloudflare's 405s.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from memory_sim.bindings.agent_memory import AgentMemoryError
from memory_sim.errors import (
    AiError,
    ConfigError,
    D1Error,
    D1SystemLimit,
    D1TimeLimit,
    EmbeddingUnavailable,
    MemorySimError,
    VectorizeError,
    VectorizeUnavailable,
)

CODE_D1_SQL = 7500
CODE_D1_NOT_FOUND = 7404
CODE_AI_BAD_INPUT = 5006
CODE_AI_NO_MODEL = 5007
CODE_AUTH_ERROR = 10000  # no token, or a token used on an account it does not open
CODE_AUTH_INVALID = 9109
CODE_INTERNAL = 1000
CODE_UNAVAILABLE = 1001
CODE_BAD_REQUEST = 1002
CODE_NO_ROUTE = 7003
CODE_METHOD_NOT_ALLOWED = 10405


class ApiError(Exception):
    """An error answered as-is: HTTP status, Cloudflare code, message, and an optional `source.pointer`."""

    def __init__(self, status: int, code: int, message: str, pointer: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.pointer = status, code, message, pointer


def _stdlib_dumps(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


try:  # orjson (the `server` extra) encodes and decodes several times faster: it is per-request latency
    import orjson

    def dumps(body: Any) -> bytes:
        try:
            return orjson.dumps(body, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS)
        except TypeError:  # what orjson refuses (ints beyond 64 bits, odd types) the standard library words
            return _stdlib_dumps(body)

    loads = orjson.loads
except ImportError:  # pragma: no cover - the server extra installs orjson
    dumps = _stdlib_dumps

    def loads(data: bytes | bytearray | memoryview | str) -> Any:
        return json.loads(bytes(data) if isinstance(data, memoryview) else data)


class EnvelopeResponse(JSONResponse):
    """A JSON answer encoded once, straight to bytes (no response model, no second validation pass)."""

    def render(self, content: Any) -> bytes:
        return dumps(content)


def success(result: Any) -> dict[str, Any]:
    return {"success": True, "errors": [], "messages": [], "result": result}


def failure(code: int, message: str, pointer: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if pointer is not None:
        error["source"] = {"pointer": pointer}
    return {"success": False, "errors": [error], "messages": [], "result": None}


def ok(result: Any, status: int = 200, result_info: dict[str, Any] | None = None) -> EnvelopeResponse:
    body = success(result)
    if result_info is not None:
        body["result_info"] = result_info
    return EnvelopeResponse(body, status_code=status)


def fail(status: int, code: int, message: str, pointer: str | None = None) -> EnvelopeResponse:
    return EnvelopeResponse(failure(code, message, pointer), status_code=status)


def to_api_error(exc: Exception) -> ApiError:
    """The project's errors in Cloudflare's words; anything else is a 500."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, AgentMemoryError):  # Agent Memory's own codes and statuses (bindings/agent_memory.py)
        return ApiError(exc.status, exc.code, exc.message)
    if isinstance(exc, VectorizeUnavailable):
        return ApiError(exc.status, exc.code or CODE_UNAVAILABLE, exc.detail)
    if isinstance(exc, VectorizeError):
        return ApiError(exc.status, exc.code or CODE_BAD_REQUEST, exc.detail)
    if isinstance(exc, D1TimeLimit):  # the HTTP status production gives it is not known; 400: not retried
        return ApiError(400, D1TimeLimit.code, str(exc))
    if isinstance(exc, D1SystemLimit):  # the HTTP status production gives it is not known; 400: not retried
        return ApiError(400, exc.code, str(exc))
    if isinstance(exc, D1Error):
        return ApiError(400, CODE_D1_SQL, str(exc))  # the full "D1_<KIND>: cause" text, as D1 words it
    if isinstance(exc, EmbeddingUnavailable):
        return ApiError(503, CODE_UNAVAILABLE, str(exc))
    if isinstance(exc, AiError):
        code = CODE_AI_NO_MODEL if "No such model" in str(exc) else CODE_AI_BAD_INPUT
        return ApiError(400, code, str(exc))
    if isinstance(exc, ConfigError):
        return ApiError(400, CODE_BAD_REQUEST, str(exc))
    if isinstance(exc, MemorySimError):
        return ApiError(400, CODE_BAD_REQUEST, str(exc))
    return ApiError(500, CODE_INTERNAL, f"internal error: {type(exc).__name__}: {exc}")


async def handle_error(request: Request, exc: Exception) -> Response:
    error = to_api_error(exc)
    return fail(error.status, error.code, error.message, error.pointer)


async def handle_http_error(request: Request, exc: HTTPException) -> Response:
    """Starlette's own answers (no route for the path, a method the route does not take) in the envelope, as
    Cloudflare answers them, instead of FastAPI's `{"detail": ...}`; headers such as `Allow` are kept."""
    path = request.url.path
    if exc.status_code == 404:
        answer = fail(404, CODE_NO_ROUTE, f"Could not route to {path}, perhaps your object identifier is invalid?")
    elif exc.status_code == 405:
        answer = fail(405, CODE_METHOD_NOT_ALLOWED, f"Method {request.method} is not allowed for {path}")
    else:
        answer = fail(exc.status_code, CODE_BAD_REQUEST, str(exc.detail))
    answer.headers.update(exc.headers or {})
    return answer


class InternalErrors:
    """The last net: an exception no route mapped is answered 500 in the envelope here and logged with its
    traceback, not re-raised. Starlette answers it too but then re-raises, and uvicorn closes the connection
    after an exception, so a keep-alive client's next request on it would fail."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            if started:  # half an answer is out: only closing the connection can tell the client
                raise
            logging.getLogger("memory_sim.server").exception(
                "unexpected error on %s %s", scope["method"], scope["path"]
            )
            error = to_api_error(exc)
            await fail(error.status, error.code, error.message, error.pointer)(scope, receive, send)
