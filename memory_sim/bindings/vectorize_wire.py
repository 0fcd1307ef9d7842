"""A Vectorize query as it travels: the JSON body the Workers binding posts to `/query`, and the service's
answer to a body it cannot read (code 40026, `Failed to parse the request body as JSON: <field>: <why> at line 1
column N`).

What the binding sends is settled from workerd's `src/cloudflare/internal/vectorize-api.ts` (`queryImplV2`):
- the body is `{...options, vector}` or `{...options, vectorId}`, never both;
- `returnMetadata` is converted inside `if (options?.returnMetadata)`: `true` becomes 'all', a truthy value that
  is not 'none', 'indexed' or 'all' throws there (`Invalid returnMetadata option. Expected: true, false, "none",
  "indexed" or "all"; got: X`), and `false` is never converted (the comment there says it maps to 'none'; the code
  does not), so it reaches the service, which refuses it: users quote `VECTOR_QUERY_ERROR (code = 40026): Failed
  to parse the request body as JSON: returnMetadata: expected value at line 1 column N`. Over REST nothing
  converts: a boolean is refused the same way (quoted from the REST API as well).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from memory_sim.bindings import vectorize_codes as codes
from memory_sim.bindings.vectorize import ReturnMetadata
from memory_sim.errors import VectorizeInputError

LEVELS: tuple[ReturnMetadata, ...] = ("none", "indexed", "all")
OP = "VECTOR_QUERY"

try:  # the same encoder as the REST adapter, so a column counted here is the column the server counts
    import orjson

    dumps: Callable[[Any], bytes] = orjson.dumps
except ImportError:  # pragma: no cover - the server and cloudflare extras install orjson
    def dumps(body: Any) -> bytes:
        return json.dumps(body, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _js(value: Any) -> str:
    """A value as JavaScript's template string shows it (the binding's own message)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return "[object Object]" if isinstance(value, dict) else ",".join(_js(v) for v in value)
    return "null" if value is None else str(value)


def sent_return_metadata(value: Any) -> Any:
    """`returnMetadata` as the binding sends it (None: left out), or the binding's own client-side error."""
    if value is None or not value:
        return None if value is None else value  # false, "", 0: not converted, sent as they are
    if value is True:
        return "all"
    if isinstance(value, str) and value in LEVELS:
        return value
    raise VectorizeInputError(
        OP, f'Invalid returnMetadata option. Expected: true, false, "none", "indexed" or "all"; got: {_js(value)}'
    )


def query_body(source: Mapping[str, Any], top_k: Any, filter: Any, return_values: Any, return_metadata: Any,
               namespace: Any) -> dict[str, Any]:
    """The body the binding posts: its options, then `source` (`{"vector": [...]}` or `{"vectorId": id}`)."""
    body: dict[str, Any] = {"topK": top_k, "returnValues": return_values}
    sent = sent_return_metadata(return_metadata)
    if sent is not None:
        body["returnMetadata"] = sent
    if filter is not None:
        body["filter"] = filter
    if namespace is not None:
        body["namespace"] = namespace
    body.update(source)
    return body


# --- the service's side -----------------------------------------------------------------------------------------
def value_column(raw: bytes | str, key: str) -> int | None:
    """The 1-based column where the top-level `key`'s value starts in a one-line JSON object, or None."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    decoder = json.JSONDecoder()
    try:
        at = _skip(text, 0)
        if text[at] != "{":
            return None
        at = _skip(text, at + 1)
        while text[at] != "}":
            name, at = decoder.raw_decode(text, at)
            at = _skip(text, at)
            if text[at] != ":":
                return None
            at = _skip(text, at + 1)
            if name == key:
                return at + 1
            _, at = decoder.raw_decode(text, at)
            at = _skip(text, at)
            if text[at] == ",":
                at = _skip(text, at + 1)
    except (ValueError, IndexError):
        return None
    return None


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _kind(value: Any) -> str:
    """A JSON value as serde words it in `invalid type: ...`."""
    if isinstance(value, bool):
        return f"boolean `{_js(value)}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f"string {json.dumps(value, ensure_ascii=False)}"
    if isinstance(value, list):
        return "sequence"
    return "map" if isinstance(value, dict) else "null"


def unreadable(key: str, why: str, raw: Callable[[], bytes | str] | bytes | str | None = None) -> VectorizeInputError:
    """The service's 40026 for one field of the body; `raw` (or a function making it) places the column."""
    try:
        text = raw() if callable(raw) else raw
    except (TypeError, ValueError):  # a body that cannot even be encoded: no column to give
        text = None
    column = None if text is None else value_column(text, key)
    where = "" if column is None else f" at line 1 column {column}"
    return VectorizeInputError(OP, f"Failed to parse the request body as JSON: {key}: {why}{where}", codes.BAD_BODY)


def service_return_metadata(value: Any, raw: Any = None) -> ReturnMetadata:
    """What the service takes for `returnMetadata`: absent or null is 'none'; anything but a level is 40026."""
    if value is None:
        return "none"
    if isinstance(value, str) and value in LEVELS:
        return value
    if isinstance(value, bool):
        raise unreadable("returnMetadata", "expected value", raw)
    if isinstance(value, str):
        raise unreadable("returnMetadata", f"unknown variant `{value}`, expected one of `none`, `indexed`, `all`", raw)
    raise unreadable("returnMetadata", f"invalid type: {_kind(value)}, expected one of `none`, `indexed`, `all`", raw)


def service_return_values(value: Any, raw: Any = None) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise unreadable("returnValues", f"invalid type: {_kind(value)}, expected a boolean", raw)
    return value


def service_top_k(value: Any, default: int, raw: Any = None) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise unreadable("topK", f"invalid type: {_kind(value)}, expected u32", raw)
    return value

