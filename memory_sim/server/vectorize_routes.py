"""Vectorize v2 over REST (contract §2): `/accounts/{account_id}/vectorize/v2/indexes/...`.

Every route validates through the same front door as the binding (the account's `QueuedIndex`), with REST's
batch limit of 5000 vectors per write. Inserts and upserts take NDJSON either as the multipart part `vectors`
(what wrangler sends) or as the raw body (what the Python SDK 5.9 sends, labelled application/json).
"""

from __future__ import annotations

from collections.abc import Callable
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from memory_sim.bindings import limits
from memory_sim.bindings import vectorize_codes as codes
from memory_sim.bindings import vectorize_validation as check
from memory_sim.bindings.vectorize import VectorizeIndex
from memory_sim.bindings.vectorize_validation import CODE_BAD_VECTOR
from memory_sim.errors import VectorizeInputError
from memory_sim.server import body_schemas as schemas
from memory_sim.server.bodies import BadJson, json_object, json_value
from memory_sim.server.envelope import ok
from memory_sim.server.fast_query import parse_query_body, run_query

router = APIRouter(prefix="/client/v4/accounts/{account_id}/vectorize/v2/indexes", tags=["vectorize"])
Json = dict[str, Any]
OBJECT: Any = Depends(json_object)  # the body as one JSON object, parsed at the front door (bodies.py)


def _account(request: Request, account_id: str) -> Any:
    return request.app.state.accounts.get(account_id)


def _stored(account: Any, name: str, op: str) -> Any:
    """The account's Vectorize, or `name`'s not-found error when the account has none (nothing is created)."""
    stored = account.stored_vectorize()
    if stored is None:
        raise check.index_not_found(check.check_index_name(name, op), op)
    return stored


def _on_index(request: Request, account_id: str, name: str, work: Callable[[VectorizeIndex], Any]) -> Any:
    """Run `work` on one existing index under its account's lock (the backends are not thread-safe)."""
    account = _account(request, account_id)
    with account.lock:
        return work(account.index(name))


# --- query (registered first: routes are matched in order, and this one is hot) ---------------------------
@router.post("/{name}/query", openapi_extra=schemas.json_body(schemas.QUERY))
async def query(request: Request, account_id: str, name: str) -> JSONResponse:
    # create_app's QueryRoute answers this route before FastAPI's routing (fast_query.py); this route documents it
    # (OpenAPI) and serves apps built with fast_query=False, with the same run_query.
    body = parse_query_body(await request.body())
    return ok(run_query(request.app.state.accounts, account_id, name, body))


# --- indexes --------------------------------------------------------------------------------------------------
@router.post("", status_code=201, openapi_extra=schemas.json_body(schemas.CREATE_INDEX))
def create_index(request: Request, account_id: str, body: Json = OBJECT) -> JSONResponse:
    """The one Vectorize route that may create the account's folder: after the config is checked."""
    config = body.get("config") or {}
    if not isinstance(config, dict):
        raise VectorizeInputError(
            "INDEX_CREATE", "config must be an object with dimensions and metric", check.CODE_INDEX_CONFIG
        )
    if "preset" in config:
        raise VectorizeInputError(
            "INDEX_CREATE", "presets are not supported locally; give dimensions and metric", codes.INDEX_CONFIG
        )
    wanted = (body.get("name"), config.get("dimensions"), config.get("metric"), body.get("description", ""))
    check.check_index_config(*wanted)
    account = _account(request, account_id)
    with account.lock:
        made = account.vectorize.create_index(*wanted)
    return ok(made.to_json(), status=201)


@router.get("")
def list_indexes(request: Request, account_id: str) -> JSONResponse:
    account = _account(request, account_id)
    with account.lock:
        stored = account.stored_vectorize()
        return ok([] if stored is None else [d.to_json() for d in stored.list_indexes()])


@router.get("/{name}")
def get_index(request: Request, account_id: str, name: str) -> JSONResponse:
    account = _account(request, account_id)
    with account.lock:
        return ok(_stored(account, name, "INDEX_GET").get_index(name).to_json())


@router.delete("/{name}")
def delete_index(request: Request, account_id: str, name: str) -> JSONResponse:
    account = _account(request, account_id)
    with account.lock:
        _stored(account, name, "INDEX_DELETE").delete_index(name)
    return ok(None)


@router.get("/{name}/info")
def info(request: Request, account_id: str, name: str) -> JSONResponse:
    return ok(_on_index(request, account_id, name, lambda index: index.describe().to_json()))


# --- writes ---------------------------------------------------------------------------------------------------
def ndjson_of(content_type: str, body: bytes) -> bytes:
    """The NDJSON payload: the multipart part `vectors` (wrangler), or the whole body (SDK, raw uploads)."""
    if not content_type.lower().startswith("multipart/"):
        return body
    message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "vectors":
            payload = part.get_payload(decode=True)  # bytes, or None for an empty part
            return payload if isinstance(payload, bytes) else b""
    raise VectorizeInputError("VECTOR_INSERT", "the multipart body has no part named 'vectors'", CODE_BAD_VECTOR)


def parse_ndjson(payload: bytes, op: str, discard_unparsable: bool) -> list[Json]:
    """One vector object per line (split on bytes: a U+2028 inside a string is no line break); blank lines
    skipped; a line that is not a JSON object this server can store (bodies.json_value) refused or dropped."""
    vectors: list[Json] = []
    for number, line in enumerate(payload.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            parsed = json_value(line, allow_nan=True)  # NaN values: the binding's "finite" error, as in-process
            why = "is not a JSON object"
        except BadJson as exc:
            parsed, why = None, f"is not valid JSON: {exc}"
        if not isinstance(parsed, dict):
            if discard_unparsable:
                continue
            kind = "insert" if op == "VECTOR_INSERT" else "upsert"  # production's words, then which line and why
            raise VectorizeInputError(op, f"failed to parse {kind} vectors request in json format: line {number} {why} "
                                      "(unparsable-behavior=error)", codes.UNPARSABLE_VECTORS)
        vectors.append(parsed)
    return vectors


async def _write(request: Request, account_id: str, name: str, kind: str) -> JSONResponse:
    op = "VECTOR_INSERT" if kind == "insert" else "VECTOR_UPSERT"
    behaviour = request.query_params.get("unparsable-behavior", "error")
    if behaviour not in ("error", "discard"):
        raise VectorizeInputError(
            op, f"unparsable-behavior must be 'error' or 'discard', got {behaviour!r}", CODE_BAD_VECTOR
        )
    body = await request.body()
    content_type = request.headers.get("content-type", "")

    def parse_and_write() -> Any:  # on a worker thread: parsing 5,000 lines is heavy work too, off the event loop
        vectors = parse_ndjson(ndjson_of(content_type, body), op, behaviour == "discard")
        if len(vectors) > limits.VECTORIZE_MAX_BATCH_REST:
            raise VectorizeInputError(
                op, f"too many vectors: {len(vectors)} > {limits.VECTORIZE_MAX_BATCH_REST} per request", codes.BATCH
            )
        write = (lambda index: index.insert(vectors)) if kind == "insert" else (lambda index: index.upsert(vectors))
        return _on_index(request, account_id, name, write)

    mutation = await run_in_threadpool(parse_and_write)
    return ok(mutation.to_json())


@router.post("/{name}/insert", openapi_extra=schemas.ndjson_body())
async def insert(request: Request, account_id: str, name: str) -> JSONResponse:
    return await _write(request, account_id, name, "insert")


@router.post("/{name}/upsert", openapi_extra=schemas.ndjson_body())
async def upsert(request: Request, account_id: str, name: str) -> JSONResponse:
    return await _write(request, account_id, name, "upsert")


@router.post("/{name}/delete_by_ids", openapi_extra=schemas.json_body(schemas.IDS))
def delete_by_ids(request: Request, account_id: str, name: str, body: Json = OBJECT) -> JSONResponse:
    ids = body.get("ids", [])
    return ok(_on_index(request, account_id, name, lambda index: index.delete_by_ids(ids)).to_json())


# --- reads ---------------------------------------------------------------------------------------------------
@router.post("/{name}/get_by_ids", openapi_extra=schemas.json_body(schemas.IDS))
def get_by_ids(request: Request, account_id: str, name: str, body: Json = OBJECT) -> JSONResponse:
    ids = body.get("ids", [])
    return ok([v.to_json() for v in _on_index(request, account_id, name, lambda index: index.get_by_ids(ids))])


@router.get("/{name}/list")
def list_vectors(
    request: Request, account_id: str, name: str, count: str | None = None, cursor: str | None = None
) -> JSONResponse:
    wanted: Any = (
        limits.VECTORIZE_LIST_DEFAULT_COUNT
        if count is None
        else (int(count) if count.isascii() and count.isdigit() else count)
    )
    return ok(_on_index(request, account_id, name, lambda index: index.list_vectors(wanted, cursor)).to_json())


# --- metadata indexes -----------------------------------------------------------------------------------------
@router.post("/{name}/metadata_index/create", openapi_extra=schemas.json_body(schemas.METADATA_INDEX))
def create_metadata_index(request: Request, account_id: str, name: str, body: Json = OBJECT) -> JSONResponse:
    work = lambda index: index.create_metadata_index(body.get("propertyName"), body.get("indexType"))  # noqa: E731
    return ok(_on_index(request, account_id, name, work).to_json())


@router.get("/{name}/metadata_index/list")
def list_metadata_indexes(request: Request, account_id: str, name: str) -> JSONResponse:
    found = _on_index(request, account_id, name, lambda index: index.list_metadata_indexes())
    return ok({"metadataIndexes": [m.to_json() for m in found]})


@router.post("/{name}/metadata_index/delete", openapi_extra=schemas.json_body(schemas.METADATA_INDEX))
def delete_metadata_index(request: Request, account_id: str, name: str, body: Json = OBJECT) -> JSONResponse:
    work = lambda index: index.delete_metadata_index(body.get("propertyName"))  # noqa: E731
    return ok(_on_index(request, account_id, name, work).to_json())
