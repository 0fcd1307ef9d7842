"""Vectorize's metadata filter language: a pure validator and a pure reference evaluator (contract §1.4, §1.5).

`parse_filter` checks a filter once and returns `Condition`s; `matches` decides one record from the values
its metadata indexes hold. Backends may evaluate filters any way they like (numpy columns, SQL) but must agree
with `matches`, and the property tests hold them to it.

Semantics chosen where Cloudflare's documentation is silent (each is UNCONFIRMED against production):
- a record without an indexed value for a key matches `$ne` and `$nin` (as MongoDB does), never the others;
- `{"$eq": null}` matches records with no indexed value, `{"$ne": null}` those with one;
- values compare only within their type (a string never equals a number, `true` never equals 1);
- string operands are cut to the 64 indexed bytes, as stored values are.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memory_sim.bindings import limits
from memory_sim.bindings import vectorize_codes as codes
from memory_sim.bindings.vectorize import MetadataIndexType
from memory_sim.errors import VectorizeInputError

IndexedValue = str | float | bool
Scalar = str | float | bool | None

EQUALITY_OPS = ("$eq", "$ne")
SET_OPS = ("$in", "$nin")
LOWER_OPS = ("$gt", "$gte")
UPPER_OPS = ("$lt", "$lte")
OPERATORS = EQUALITY_OPS + SET_OPS + LOWER_OPS + UPPER_OPS
FILTER_ERROR_CODE = codes.FILTER  # this project's code; production's is not known


@dataclass(frozen=True, slots=True)
class Condition:
    """One key of a filter: every (operator, operand) pair must hold (they are ANDed)."""

    key: str
    ops: tuple[tuple[str, Any], ...]


def _reject(op: str, message: str) -> VectorizeInputError:
    return VectorizeInputError(op, f"Invalid filter: {message}", FILTER_ERROR_CODE)


def truncate_utf8(text: str, max_bytes: int = limits.VECTORIZE_METADATA_INDEX_STRING_BYTES) -> str:
    """The first `max_bytes` bytes of `text`, cut on a UTF-8 character boundary."""
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text
    return raw[:max_bytes].decode("utf-8", errors="ignore")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _scalar(op_name: str, key: str, op: str, value: Any, *, allow_null: bool, ranged: bool) -> Scalar:
    if value is None and allow_null and not ranged:
        return None
    if isinstance(value, bool) and not ranged:
        return value
    if _is_number(value):
        if not math.isfinite(value):
            raise _reject(op_name, f"{op} on '{key}' needs a finite number")
        return float(value)
    if isinstance(value, str):
        return truncate_utf8(value)
    kinds = "a string or a number" if ranged else "a string, number, boolean or null"
    raise _reject(op_name, f"{op} on '{key}' takes {kinds}, got {json.dumps(value, default=str)}")


def _check_key(op_name: str, key: Any) -> str:
    if not isinstance(key, str) or not key:
        raise _reject(op_name, "keys must be non-empty strings")
    if len(key) > limits.VECTORIZE_MAX_FILTER_KEY_CHARS:
        raise _reject(op_name, f"key longer than {limits.VECTORIZE_MAX_FILTER_KEY_CHARS} characters")
    if key.startswith("$") or '"' in key or any(not part for part in key.split(".")):
        raise _reject(op_name, f"invalid key '{key}' (no leading '$', no '\"', no empty path segment)")
    return key


def _operand(op_name: str, key: str, op: str, value: Any) -> Any:
    if op in SET_OPS:
        if not isinstance(value, list):
            raise _reject(op_name, f"{op} on '{key}' takes an array")
        return tuple(_scalar(op_name, key, op, v, allow_null=True, ranged=False) for v in value)
    return _scalar(op_name, key, op, value, allow_null=True, ranged=op in LOWER_OPS + UPPER_OPS)


def _check_combination(op_name: str, key: str, ops: list[str]) -> None:
    if len(ops) == 1:
        return
    lower = [o for o in ops if o in LOWER_OPS]
    upper = [o for o in ops if o in UPPER_OPS]
    if len(ops) != 2 or len(lower) != 1 or len(upper) != 1:
        raise _reject(
            op_name, f"'{key}' combines {', '.join(ops)}; only one of $gt/$gte with one of $lt/$lte may be combined"
        )


def _condition(op_name: str, key: str, value: Any) -> Condition:
    if not isinstance(value, dict):
        if isinstance(value, list):
            raise _reject(op_name, f"'{key}' has an array; use $in")
        return Condition(key, (("$eq", _scalar(op_name, key, "$eq", value, allow_null=True, ranged=False)),))
    if not value:
        raise _reject(op_name, f"'{key}' has an empty operator object")
    unknown = [op for op in value if op not in OPERATORS]
    if unknown:
        raise _reject(op_name, f"unsupported operator {unknown[0]!r} on '{key}' (nested objects need dotted keys)")
    _check_combination(op_name, key, list(value))
    return Condition(key, tuple((op, _operand(op_name, key, op, operand)) for op, operand in value.items()))


def parse_filter(filter: Any, op_name: str = "VECTOR_QUERY") -> tuple[Condition, ...]:
    """Validate a filter (contract §1.4) and return its conditions, or raise VectorizeInputError."""
    if not isinstance(filter, dict) or not filter:
        raise _reject(op_name, "the filter must be a non-empty object")
    try:
        compact = json.dumps(filter, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise _reject(op_name, f"not JSON-serialisable ({exc})") from None
    if len(compact.encode("utf-8")) >= limits.VECTORIZE_MAX_FILTER_JSON_BYTES:
        raise _reject(op_name, f"compact JSON must be under {limits.VECTORIZE_MAX_FILTER_JSON_BYTES} bytes")
    return tuple(_condition(op_name, _check_key(op_name, key), value) for key, value in filter.items())


def lookup(metadata: Mapping[str, Any] | None, path: str) -> Any:
    """The value at a dotted path of nested metadata, or None."""
    node: Any = metadata
    for part in path.split("."):
        if not (type(node) is dict or isinstance(node, Mapping)) or part not in node:  # dict first: ABC checks are slow
            return None
        node = node[part]
    return node


def index_value(value: Any, index_type: MetadataIndexType) -> IndexedValue | None:
    """What a metadata index of `index_type` holds for `value` (None: the value is not indexed)."""
    if index_type == "string" and isinstance(value, str):
        return truncate_utf8(value)
    if index_type == "number" and _is_number(value) and math.isfinite(value):
        return float(value)
    if index_type == "boolean" and isinstance(value, bool):
        return value
    return None


def indexed_values(
    metadata: Mapping[str, Any] | None, indexes: Mapping[str, MetadataIndexType]
) -> dict[str, IndexedValue]:
    """The values a record's metadata contributes to the given metadata indexes, at write time."""
    out: dict[str, IndexedValue] = {}
    for prop, kind in indexes.items():
        value = index_value(
            metadata.get(prop) if "." not in prop and type(metadata) is dict else lookup(metadata, prop), kind
        )
        if value is not None:
            out[prop] = value
    return out


def indexed_as_written(indexed: Mapping[str, IndexedValue], metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """What `returnMetadata: 'indexed'` answers: the indexed values, a number with the type it was written with
    (the index holds float64, but a 2 written comes back as 2, not 2.0; strings stay cut to 64 bytes)."""
    out: dict[str, Any] = dict(indexed)
    for key, value in indexed.items():
        if type(value) is float:
            written = lookup(metadata, key)
            if type(written) is int:
                out[key] = written
    return out


def same_type(a: Any, b: Any) -> bool:
    return isinstance(a, bool) == isinstance(b, bool) and isinstance(a, str) == isinstance(b, str)


def _equal(stored: IndexedValue | None, operand: Scalar) -> bool:
    if operand is None or stored is None:
        return operand is None and stored is None
    return same_type(stored, operand) and stored == operand


def _holds(stored: IndexedValue | None, op: str, operand: Any) -> bool:
    if op == "$eq":
        return _equal(stored, operand)
    if op == "$ne":
        return not _equal(stored, operand)
    if op == "$in":
        return any(_equal(stored, o) for o in operand)
    if op == "$nin":
        return not any(_equal(stored, o) for o in operand)
    if stored is None or isinstance(stored, bool) or not same_type(stored, operand):
        return False
    if op == "$lt":
        return stored < operand
    if op == "$lte":
        return stored <= operand
    if op == "$gt":
        return stored > operand
    return stored >= operand  # $gte


def matches(conditions: tuple[Condition, ...], indexed: Mapping[str, IndexedValue]) -> bool:
    """The reference evaluator: does a record with these indexed values pass every condition?"""
    return all(_holds(indexed.get(c.key), op, operand) for c in conditions for op, operand in c.ops)


def condition_keys(conditions: tuple[Condition, ...]) -> list[str]:
    return [c.key for c in conditions]
