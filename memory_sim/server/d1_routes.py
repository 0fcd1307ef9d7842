"""D1 over REST (contract §3.4): `/accounts/{account_id}/d1/database[/{database_id}[/query|/raw]]`.

`/query` and `/raw` take `{sql, params?}` (the sql may hold several `;`-separated statements) or
`{batch: [{sql, params?}, ...]}`; every statement of one request runs in one transaction, through the same
binding front door as `env.DB`. A failing statement's position comes back as the error's `source.pointer`
(`/batch/N`), which the Cloudflare adapter uses to word `exec` errors by line. Only the core's public
`run_statements` is used.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from memory_sim.bindings.d1_sql import split_statements
from memory_sim.errors import D1StatementError
from memory_sim.server import body_schemas as schemas
from memory_sim.server.bodies import json_object, json_object_of, type_name
from memory_sim.server.envelope import CODE_BAD_REQUEST, CODE_D1_SQL, ApiError, ok

router = APIRouter(prefix="/client/v4/accounts/{account_id}/d1/database", tags=["d1"])
Json = dict[str, Any]


def _account(request: Request, account_id: str) -> Any:
    return request.app.state.accounts.get(account_id)


@router.post("", openapi_extra=schemas.json_body(schemas.CREATE_DATABASE))
def create_database(request: Request, account_id: str, body: Json = Depends(json_object)) -> JSONResponse:
    """The one D1 route that may create the account's folder: after the name is checked."""
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise ApiError(400, CODE_BAD_REQUEST, "a database needs a name")
    return ok(_account(request, account_id).create_database(name))


@router.get("")
def list_databases(
    request: Request, account_id: str, page: int = 1, per_page: int = 1000, name: str | None = None
) -> JSONResponse:
    account = _account(request, account_id)
    described = [account.describe_database(i) for i in sorted(account.catalogue())]
    if name is not None:
        described = [d for d in described if d["name"] == name]
    start = (max(page, 1) - 1) * per_page
    shown = described[start : start + per_page]
    info = {"page": page, "per_page": per_page, "count": len(shown), "total_count": len(described)}
    return ok(shown, result_info=info)


@router.get("/{database_id}")
def get_database(request: Request, account_id: str, database_id: str) -> JSONResponse:
    return ok(_account(request, account_id).describe_database(database_id))


@router.delete("/{database_id}")
def delete_database(request: Request, account_id: str, database_id: str) -> JSONResponse:
    _account(request, account_id).delete_database(database_id)
    return ok(None)


def bound_value(value: Any) -> Any:
    """JSON params as D1 values. An array of byte values is a BLOB: the adapter sends bytes that way (Cloudflare
    types params as strings; whether it takes other JSON types is UNCONFIRMED, contract §3.4)."""
    if isinstance(value, list) and all(isinstance(b, int) and not isinstance(b, bool) and 0 <= b < 256 for b in value):
        return bytes(value)
    return value


def statements_of(body: Json) -> list[tuple[str, list[Any]]]:
    """(sql, params) per statement, from `{sql, params}` (split on `;`) or `{batch: [...]}`; every shape checked
    here, before anything runs."""
    items = body.get("batch") if "batch" in body else [body]
    if not isinstance(items, list) or not items:
        raise ApiError(
            400,
            CODE_BAD_REQUEST,
            "invalid request: body: needs `sql` (a string) or `batch` (a non-empty array of queries)",
        )
    out: list[tuple[str, list[Any]]] = []
    for number, item in enumerate(items):
        sql, params = _query_of(item, f"/batch/{number}" if "batch" in body else None)
        parts = split_statements(sql) or [sql]
        if len(parts) > 1 and params:
            raise ApiError(400, CODE_D1_SQL, "D1_ERROR: params bind one statement; send several statements as `batch`")
        out.extend((part, [bound_value(p) for p in params] if len(parts) == 1 else []) for part in parts)
    return out


def _query_of(item: Any, pointer: str | None) -> tuple[str, list[Any]]:
    """The `sql` and `params` of one query object (the body, or `batch` item `pointer`), or a 400 saying what is
    malformed and where."""
    where = "body" if pointer is None else "batch[" + pointer.rsplit("/", 1)[1] + "]"

    def malformed(why: str) -> ApiError:
        return ApiError(400, CODE_BAD_REQUEST, f"invalid request: {where}: {why}", pointer)

    if not isinstance(item, dict):
        raise malformed(f"a query is an object {{sql, params?}}, not {type_name(item)}")
    sql, params = item.get("sql"), item.get("params")
    if not isinstance(sql, str) or not sql.strip():
        raise malformed("`sql` must be a non-empty string")
    if params is not None and not isinstance(params, list):
        raise malformed(f"`params` must be an array, not {type_name(params)}")
    return sql, params or []


@contextmanager
def served_database(account: Any, database_id: str) -> Iterator[tuple[Any, Any]]:
    """The database one request runs on, and its Time Travel history (the caller reports a change with
    `history.changed(database)`): a restore swaps the database only between two requests, and a change pending
    for over its interval is kept before this request runs."""
    history = account.history(database_id)
    with history.serving():
        database = account.database(database_id)
        history.catch_up(database)
        yield database, history


def _run(request: Request, account_id: str, database_id: str, body: Json, *, raw: bool) -> JSONResponse:
    """Every statement of the request in one transaction (the D1 core's `run_statements`); a failing statement
    is named in `source.pointer` as `/batch/N`."""
    with served_database(_account(request, account_id), database_id) as (database, history):
        try:
            results = database.run_statements(statements_of(body), raw=raw)
        except D1StatementError as exc:
            pointer = f"/batch/{exc.index}" if "batch" in body else None  # a single statement is no batch
            raise ApiError(400, CODE_D1_SQL, str(exc), pointer) from exc
        if any(result.meta.changed_db for result in results):
            history.changed(database)  # Time Travel keeps this state, now or before the first request after a minute
    return ok([result.to_json() for result in results])


async def _statement_body(request: Request) -> Json:
    """The request body parsed once, without a pydantic pass (a batch of 200 rows is a big body)."""
    return json_object_of(await request.body())


STATEMENTS_BODY: Any = schemas.json_body(schemas.STATEMENTS)


@router.post("/{database_id}/query", openapi_extra=STATEMENTS_BODY)
async def query(request: Request, account_id: str, database_id: str) -> JSONResponse:
    body = await _statement_body(request)
    return await run_in_threadpool(_run, request, account_id, database_id, body, raw=False)


@router.post("/{database_id}/raw", openapi_extra=STATEMENTS_BODY)
async def raw(request: Request, account_id: str, database_id: str) -> JSONResponse:
    body = await _statement_body(request)
    return await run_in_threadpool(_run, request, account_id, database_id, body, raw=True)
