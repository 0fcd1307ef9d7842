"""Request bodies, parsed and checked once at the front door: every route reads its JSON through `json_value`.

JSON is parsed with orjson, which refuses what a store could not keep: invalid UTF-8 and lone surrogates (a JSON
escape such as "\\ud800" that pairs with nothing is not Unicode, and Chroma, SQLite and DuckDB cannot encode it),
NaN, Infinity and nesting deeper than 1024. The standard library's parser, the fallback without orjson, accepts
all of those, so there the value is re-encoded strictly to refuse the same inputs. NDJSON vector lines take NaN
and Infinity (Python's json writes them), so that the binding refuses non-finite values in its own words.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from memory_sim.server.envelope import CODE_BAD_REQUEST, ApiError, loads

Json = dict[str, Any]


class BadJson(ValueError):
    """Why a body is not JSON this server can store: orjson's words, with a hint for lone surrogates."""


def json_value(raw: bytes, *, allow_nan: bool = False) -> Any:
    """The JSON value of `raw` (UTF-8), or BadJson saying what is wrong with it. `allow_nan` takes the tokens NaN
    and Infinity as numbers (as Python's json writes them), for the binding to refuse in its own words."""
    try:
        value = loads(raw)
        if loads is not json.loads:
            return value
    except ValueError as exc:
        if not allow_nan or loads is json.loads:
            raise BadJson(_why(str(exc))) from None
        try:
            value = json.loads(raw)
        except ValueError:
            raise BadJson(_why(str(exc))) from None
    return _strict(value, allow_nan)


def _strict(value: Any, allow_nan: bool) -> Any:
    """A value the standard library parsed, refused where orjson would refuse it (lone surrogates, NaN)."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=allow_nan).encode("utf-8")
    except UnicodeEncodeError:
        raise BadJson(_why("a string holds a lone surrogate")) from None
    except ValueError as exc:
        raise BadJson(str(exc)) from None
    return value


def _why(reason: str) -> str:
    """orjson's reason, in plain words where it is about Unicode (its wording names surrogates for bad UTF-8 too)."""
    if "surrogate" not in reason:
        return reason
    _, _, where = reason.partition(": line ")
    plain = "text is not valid Unicode (a lone surrogate escape such as \\ud800, or bytes that are not UTF-8)"
    return f"{plain}: line {where}" if where else plain


def json_object_of(raw: bytes) -> Json:
    """A body that must be one JSON object; ApiError 400 in Cloudflare's envelope otherwise."""
    try:
        body = json_value(raw)
    except BadJson as exc:
        raise ApiError(400, CODE_BAD_REQUEST, f"invalid request: body: not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError(400, CODE_BAD_REQUEST, f"invalid request: body: must be a JSON object, not {type_name(body)}")
    return body


async def json_object(request: Request) -> Json:
    """FastAPI dependency: the request's body as one JSON object (its schema is in body_schemas.py, for OpenAPI)."""
    return json_object_of(await request.body())


def type_name(value: Any) -> str:
    """JSON's name for a parsed value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"
