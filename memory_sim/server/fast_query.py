"""The hot route, `POST .../vectorize/v2/indexes/{name}/query`, answered before FastAPI's routing.

`QueryRoute` is a plain ASGI middleware, the app's outermost layer: for that one route it reads the body and
sends what `QueryAnswerer` gives, and passes every other request on. `QueryAnswerer` turns (path, Authorization
header, body) into (HTTP status, envelope bytes): the token check (server/auth.py), the query under the
account's lock, errors mapped to Cloudflare's envelope. Through FastAPI's route matching and parameter solving
the server's share of a query is about a quarter larger (docs/server.md, Speed).
The FastAPI route stays (OpenAPI, and apps built with `fast_query=False`) and runs the same `run_query`; a test
checks that both answer alike.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from starlette.concurrency import run_in_threadpool

from memory_sim.bindings import limits
from memory_sim.bindings import vectorize_codes as codes
from memory_sim.bindings import vectorize_wire as wire
from memory_sim.errors import VectorizeInputError
from memory_sim.server.auth import TokenTable, authorization, parse_tokens
from memory_sim.server.bodies import BadJson, json_value
from memory_sim.server.envelope import dumps, failure, success, to_api_error

QUERY_PATH = re.compile(r"^/client/v4/accounts/([^/]+)/vectorize/v2/indexes/([^/]+)/query$")
Json = dict[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
OP = "VECTOR_QUERY"


def parse_query_body(raw: bytes) -> Json:
    """The query's JSON object, read as the service reads it: a body or a field it cannot read is 40026 (a
    boolean `returnMetadata` included: nothing converts it over REST, vectorize_wire.py); `topK`, `returnValues`
    and `returnMetadata` come back filled in. A query names `vector` or `vectorId`, not both: the binding never
    sends both, and letting one of them win would hide the caller's mistake."""
    try:
        body = json_value(raw)
    except BadJson as exc:
        raise VectorizeInputError(OP, f"Failed to parse the request body as JSON: {exc}", codes.BAD_BODY) from None
    if not isinstance(body, dict):
        raise VectorizeInputError(
            OP, "Failed to parse the request body as JSON: expected a JSON object", codes.BAD_BODY
        )
    by_vector, by_id = body.get("vector") is not None, body.get("vectorId") is not None
    if by_vector and by_id:
        raise VectorizeInputError(OP, "a query takes `vector` or `vectorId`, not both", codes.QUERY_SOURCE)
    if not (by_vector or by_id):
        raise VectorizeInputError(OP, "a query needs `vector` (an array of numbers) or `vectorId`", codes.QUERY_SOURCE)
    body["topK"] = wire.service_top_k(body.get("topK"), limits.VECTORIZE_DEFAULT_TOP_K, raw)
    body["returnValues"] = wire.service_return_values(body.get("returnValues"), raw)
    body["returnMetadata"] = wire.service_return_metadata(body.get("returnMetadata"), raw)
    return body


def run_query(accounts: Any, account_id: str, name: str, body: Json) -> Json:
    """A query by `vector` or `vectorId` (a body from `parse_query_body`) on one index, under its account's lock;
    the result as JSON."""
    options = {
        "top_k": body["topK"],
        "filter": body.get("filter"),
        "return_values": body["returnValues"],
        "return_metadata": body["returnMetadata"],
        "namespace": body.get("namespace"),
    }
    account = accounts.get(account_id)
    with account.lock:  # the backends are not thread-safe; other routes run in the thread pool
        index = account.index(name)  # an unknown account or index is not found, and nothing is created
        if body.get("vectorId") is not None:
            result = index.query_by_id(body["vectorId"], **options)
        else:
            result = index.query(body["vector"], **options)
    return result.to_json()


class QueryAnswerer:
    """(account id, index name, Authorization header, body) -> (status, envelope bytes) for the query route, the
    first two from `QUERY_PATH`. Never raises: every failure is an answer."""

    def __init__(self, accounts: Any, tokens: TokenTable | str | Sequence[str]) -> None:
        self.accounts, self.tokens = accounts, parse_tokens(tokens)

    def __call__(self, account_id: str, name: str, authorization: str, body: bytes) -> tuple[int, bytes]:
        try:
            refused = self.tokens.refusal(authorization, account_id)
            if refused is not None:
                raise refused
            result = run_query(self.accounts, account_id, name, parse_query_body(body))
        except Exception as exc:  # mapped at the HTTP boundary, as the FastAPI routes' error handler does
            error = to_api_error(exc)
            return error.status, dumps(failure(error.code, error.message, error.pointer))
        return 200, dumps(success(result))


class QueryRoute:
    """ASGI middleware answering `QUERY_PATH` POSTs with a `QueryAnswerer`; everything else goes to `app`."""

    def __init__(self, app: Any, answer: QueryAnswerer) -> None:
        self.app, self.answer = app, answer

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        matched = QUERY_PATH.match(scope["path"]) if scope["type"] == "http" and scope["method"] == "POST" else None
        if matched is None:
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        # on a worker thread: the answer takes the account's lock, which a long write may hold (an upsert of
        # 5,000 vectors: 19.5 s), and the event loop must go on serving everyone else meanwhile
        status, payload = await run_in_threadpool(self.answer, matched[1], matched[2],
                                                  authorization(scope["headers"]), body)
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


async def read_body(receive: Receive) -> bytes:
    """The whole request body from ASGI `http.request` messages."""
    parts = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)
