"""The hot route, `POST .../vectorize/v2/indexes/{name}/query`, answered in plain ASGI.

Measured under uvicorn (docs/server.md, "Speed"): FastAPI's routing over every route, path-parameter solving and
its middleware stack cost about 0.8 ms per query on this 2-core machine, several times the index call itself.
`QueryFastPath` matches the one path with a regex and answers it directly; the FastAPI route stays registered
(OpenAPI, and any request this path lets through) and both run the same `run_query`. It sits inside `TokenGate`,
so the bearer token is checked first.
"""

from __future__ import annotations

import re
from typing import Any

from memory_sim.bindings import limits
from memory_sim.bindings.vectorize_validation import CODE_BAD_VECTOR
from memory_sim.errors import VectorizeInputError
from memory_sim.server.envelope import dumps, fail, loads, to_api_error

QUERY_PATH = re.compile(r"^/client/v4/accounts/([^/]+)/vectorize/v2/indexes/([^/]+)/query$")
Json = dict[str, Any]


def parse_query_body(raw: bytes) -> Json:
    """The JSON object a query sends; malformed input is the binding's input error (400)."""
    try:
        body = loads(raw)
    except ValueError:
        raise VectorizeInputError("VECTOR_QUERY", "the request body is not valid JSON", CODE_BAD_VECTOR) from None
    if not isinstance(body, dict):
        raise VectorizeInputError("VECTOR_QUERY", "the request body must be a JSON object", CODE_BAD_VECTOR)
    return body


def run_query(accounts: Any, account_id: str, name: str, body: Json) -> Json:
    """A query by `vector` or `vectorId` on one index, under its account's lock; the result as JSON."""
    options = {
        "top_k": body.get("topK", limits.VECTORIZE_DEFAULT_TOP_K),
        "filter": body.get("filter"),
        "return_values": body.get("returnValues", False),
        "return_metadata": body.get("returnMetadata", "none"),
        "namespace": body.get("namespace"),
    }
    account = accounts.get(account_id)
    with account.lock:  # the backends are not thread-safe; other routes run in the thread pool
        index = account.vectorize.index(name)
        if "vectorId" in body:
            result = index.query_by_id(body["vectorId"], **options)
        else:
            result = index.query(body.get("vector"), **options)
    return result.to_json()


async def read_body(receive: Any) -> bytes:
    chunks: list[bytes] = []
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)


class QueryFastPath:
    """ASGI middleware: the query route without FastAPI; everything else passes through to `app`."""

    def __init__(self, app: Any, accounts: Any) -> None:
        self.app, self.accounts = app, accounts

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        matched = QUERY_PATH.match(scope["path"]) if scope["type"] == "http" and scope["method"] == "POST" else None
        if matched is None:
            await self.app(scope, receive, send)
            return
        try:
            result = run_query(self.accounts, matched[1], matched[2], parse_query_body(await read_body(receive)))
        except Exception as exc:  # mapped at the HTTP boundary, as the FastAPI routes' error handler does
            error = to_api_error(exc)
            await fail(error.status, error.code, error.message, error.pointer)(scope, receive, send)
            return
        payload = dumps({"success": True, "errors": [], "messages": [], "result": result})
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": payload})
