"""A Worker's own bindings (`env.VECTORIZE`, `env.DB`, `env.AI`) served from this server: the fetcher of workerd's
binding modules under `wrangler dev` or Miniflare (npm/memory-sim-miniflare, or a `remoteProxyConnectionString`).

    /remote-proxy/{account_id}/vectorize/{index_name}     a Vectorize v2 binding of that index
    /remote-proxy/{account_id}/d1/{database}              a D1 binding (the database's id, or its name)
    /remote-proxy/{account_id}/ai                         a Workers AI binding

Each takes the binding's own request in Miniflare's remote-proxy protocol: its URL in `MF-URL` (e.g.
`http://vector-search/query`, `http://d1/execute?resultsFormat=NONE`, `https://workers-binding.ai/run?version=3`),
its headers as `MF-Header-<name>`, its body as is. The answer is what the binding module expects from Cloudflare
(bare results; errors as `{code, error}`, `{error}`, or `{errors: [{code, message}]}`), so the module's own
wording reaches the Worker: `VECTOR_QUERY_ERROR (code = 40025): ...`, `D1_ERROR: ...`, `5007: AiError: ...`.

The token: `Authorization: Bearer <token>`, or `?token=<token>` in the URL (a connection string cannot carry a
header); the same check as every `/client/v4` route. A WebSocket to these paths (Miniflare's RPC channel) is not
served: the bindings here need only HTTP.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from memory_sim.bindings import limits
from memory_sim.bindings import vectorize_codes as codes
from memory_sim.errors import D1Error, VectorizeInputError
from memory_sim.server.ai_capacity import AiCapacity, rejects_if_busy
from memory_sim.server.bodies import BadJson, json_value
from memory_sim.server.d1_routes import bound_value, served_database
from memory_sim.server.envelope import (
    CODE_BAD_REQUEST,
    CODE_D1_NOT_FOUND,
    ApiError,
    EnvelopeResponse,
    failure,
    to_api_error,
)
from memory_sim.server.fast_query import parse_query_body, run_query
from memory_sim.server.vectorize_routes import parse_ndjson

router = APIRouter(prefix="/remote-proxy/{account_id}", tags=["workers-bindings"])
TOKEN_IN_URL = re.compile(r"([?&]token=)[^&\s]*")


class HideTokens(logging.Filter):
    """A token given in the URL (`?token=`) is never written to the access log: uvicorn logs the full path."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(TOKEN_IN_URL.sub(r"\1***", a) if isinstance(a, str) else a for a in record.args)
        return True


logging.getLogger("uvicorn.access").addFilter(HideTokens())  # kept by uvicorn's dictConfig, which adds only
SESSION_HEADER = "x-cf-d1-session-commit-token"
ALWAYS_PRIMARY = "first-primary"  # what `env.DB` without a session sends; it ignores any bookmark answered


@dataclass(frozen=True)
class BindingCall:
    """One request of a binding module: its own URL, headers (lower-case names) and body."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes

    @property
    def endpoint(self) -> str:
        return urlsplit(self.url).path.rsplit("/", 1)[-1]

    @property
    def query(self) -> str:
        return urlsplit(self.url).query


async def binding_call(request: Request, account_id: str) -> BindingCall:
    """The binding's request out of the remote-proxy envelope, after the token check (ApiError if refused)."""
    header = request.headers.get("authorization") or ""
    if not header and request.query_params.get("token"):
        header = f"Bearer {request.query_params['token']}"
    refused = request.app.state.tokens.refusal(header, account_id)
    if refused is not None:
        raise refused
    prefix = "mf-header-"
    headers = {k[len(prefix):]: v for k, v in request.headers.items() if k.startswith(prefix)}
    return BindingCall(request.method, request.headers.get("mf-url", str(request.url)), headers, await request.body())


def answer(result: Any, headers: dict[str, str] | None = None) -> EnvelopeResponse:
    """A bare result, `content-type: application/json` exactly (the AI module parses nothing else)."""
    return EnvelopeResponse(result, headers=headers)


# --- Vectorize ------------------------------------------------------------------------------------------------
VECTORIZE_OPS = {"info": "INDEX_GET", "query": "VECTOR_QUERY", "insert": "VECTOR_INSERT", "upsert": "VECTOR_UPSERT",
                 "getByIds": "VECTOR_GET", "deleteByIds": "VECTOR_DELETE"}


async def vectorize(request: Request, account_id: str, name: str) -> JSONResponse:
    try:
        call = await binding_call(request, account_id)
        return answer(await run_in_threadpool(vectorize_result, request.app.state.accounts, account_id, name, call))
    except Exception as exc:  # the module reads `{code, error}` and throws `<OP>_ERROR (code = N): error`
        error = to_api_error(exc)
        return EnvelopeResponse({"code": error.code, "error": error.message}, status_code=error.status)


# One operation per method, each with its own OpenAPI id (a route of two methods gives both the same id).
for _method in ("GET", "POST"):
    router.add_api_route("/vectorize/{name}", vectorize, methods=[_method],
                         operation_id=f"vectorize_binding_{_method.lower()}")


def vectorize_result(accounts: Any, account_id: str, name: str, call: BindingCall) -> Any:
    op = VECTORIZE_OPS.get(call.endpoint)
    if op is None:
        raise ApiError(404, CODE_BAD_REQUEST, f"this Vectorize binding has no operation {call.endpoint!r}")
    if op == "VECTOR_QUERY":
        return run_query(accounts, account_id, name, parse_query_body(call.body))
    account = accounts.get(account_id)
    if op in ("VECTOR_INSERT", "VECTOR_UPSERT"):
        vectors = parse_ndjson(call.body, op, discard_unparsable=False)
        if len(vectors) > limits.VECTORIZE_MAX_BATCH_BINDING:  # the binding's limit, not REST's 5000
            raise VectorizeInputError(op, f"too many vectors: {len(vectors)} > "
                                      f"{limits.VECTORIZE_MAX_BATCH_BINDING} per request", codes.BATCH)
    with account.lock:  # the backends are not thread-safe
        index = account.index(name)
        if op == "INDEX_GET":
            return index.describe().to_json()
        if op == "VECTOR_INSERT":
            return index.insert(vectors).to_json()
        if op == "VECTOR_UPSERT":
            return index.upsert(vectors).to_json()
        ids = _ids(call.body, op)
        if op == "VECTOR_GET":
            return [vector.to_json() for vector in index.get_by_ids(ids)]
        return index.delete_by_ids(ids).to_json()


def _ids(body: bytes, op: str) -> Any:
    try:
        parsed = json_value(body)
    except BadJson as exc:
        raise VectorizeInputError(op, f"Failed to parse the request body as JSON: {exc}", codes.BAD_BODY) from None
    return parsed.get("ids", []) if isinstance(parsed, dict) else parsed


# --- D1 -------------------------------------------------------------------------------------------------------
@router.post("/d1/{database}")
async def d1(request: Request, account_id: str, database: str) -> JSONResponse:
    try:
        call = await binding_call(request, account_id)
        result, bookmark = await run_in_threadpool(d1_result, request.app.state.accounts, account_id, database, call)
        return answer(result, {SESSION_HEADER: bookmark} if bookmark else None)
    except Exception as exc:  # the module reads `{error}` and throws `D1_ERROR: error`
        error = to_api_error(exc)
        return EnvelopeResponse({"success": False, "error": _cause(exc, error.message)}, status_code=error.status)


def _cause(exc: Exception, message: str) -> str:
    """D1's text without its `D1_ERROR: ` prefix: the binding module puts that prefix back."""
    if isinstance(exc, D1Error):
        return exc.cause
    return message


def database_id(account: Any, database: str) -> str:
    """A database's id from its id or its name (wrangler.toml may give either)."""
    catalogue = account.catalogue()
    if database in catalogue:
        return database
    found = next((i for i, entry in catalogue.items() if entry["name"] == database), None)
    if found is None:
        raise ApiError(404, CODE_D1_NOT_FOUND, f"The database {database} could not be found")
    return found


def statements(body: bytes) -> list[tuple[str, list[Any]]]:
    """`{sql, params}` or `[{sql, params}, ...]`, as the binding module sends them."""
    try:
        parsed = json_value(body)
    except BadJson as exc:
        raise ApiError(400, CODE_BAD_REQUEST, f"invalid request: body: not valid JSON: {exc}") from None
    items = parsed if isinstance(parsed, list) else [parsed]
    if not items or not all(isinstance(i, dict) and isinstance(i.get("sql"), str) for i in items):
        raise ApiError(400, CODE_BAD_REQUEST, "invalid request: body: needs {sql, params} or an array of them")
    return [(item["sql"], [bound_value(p) for p in item.get("params") or []]) for item in items]


def d1_result(accounts: Any, account_id: str, database: str, call: BindingCall) -> tuple[Any, str | None]:
    """The binding's answer, and the session bookmark to send back (None for `env.DB` outside a session).
    `/query` runs its statements in one transaction (a batch is atomic); `/execute` (`exec`, `run`) runs them one
    by one and stops at the first failure, answering the error in that statement's place, as `exec` reads it."""
    account = accounts.get(account_id)
    with served_database(account, database_id(account, database)) as (db, history):
        return _d1_served(db, history, call)


def _d1_served(db: Any, history: Any, call: BindingCall) -> tuple[Any, str | None]:
    batched = call.body.lstrip().startswith(b"[")
    wanted = statements(call.body)
    results: list[Any] = []
    try:
        if call.endpoint == "execute":
            for statement in wanted:
                try:
                    results.append(db.run_statements([statement])[0].to_json())  # rows as objects
                except D1Error as exc:
                    if not batched:
                        raise
                    results.append({"success": False, "error": exc.cause, "meta": {}})
                    break
        else:
            results = [r.to_json() for r in db.run_statements(wanted, raw=True)]
    finally:
        if any((r.get("meta") or {}).get("changed_db") for r in results):
            history.changed(db)
    session = call.headers.get(SESSION_HEADER)
    bookmark = history.current(db).bookmark if session and session != ALWAYS_PRIMARY else None
    return (results if batched else results[0]), bookmark


# --- Workers AI -----------------------------------------------------------------------------------------------
@router.post("/ai")
async def ai(request: Request, account_id: str) -> JSONResponse:
    try:
        call = await binding_call(request, account_id)
        request.app.state.accounts.get(account_id)  # validates the id; models are shared by every account
        model = call.headers.get("cf-consn-model-id", "")
        capacity = app_capacity(request.app)
        return answer(await run_in_threadpool(ai_result, request.app.state.ai, model, call.body, capacity))
    except Exception as exc:  # the module reads `errors[0]` and throws `InferenceUpstreamError("code: message")`
        error = to_api_error(exc)
        return EnvelopeResponse(failure(error.code, error.message), status_code=error.status)


def ai_result(ai: Any, model: str, body: bytes, capacity: AiCapacity | None = None) -> Any:
    """`ai.run(model, inputs)` for a binding's `{inputs, options}` body (the model comes in a header); with
    `options.rejectIfBusy`, refused at once (429, 3040) while another run of the model is under way."""
    try:
        parsed = json_value(body)
    except BadJson as exc:
        raise ApiError(400, CODE_BAD_REQUEST, f"invalid request: body: not valid JSON: {exc}") from None
    inputs = parsed.get("inputs") if isinstance(parsed, dict) else None
    options = parsed.get("options") if isinstance(parsed, dict) else None
    with (capacity or AiCapacity()).running(model, reject_if_busy=rejects_if_busy(options)):
        return ai.run(model, inputs if isinstance(inputs, dict) else {})


def app_capacity(app: Any) -> AiCapacity:
    """The app's one AiCapacity, made on first use."""
    found: AiCapacity | None = getattr(app.state, "ai_capacity", None)
    if found is None:
        found = app.state.ai_capacity = AiCapacity()
    return found
