"""The front door of every Vectorize backend: validate and normalise a request once, with Cloudflare's limits
(bindings/limits.py) and wording, so that backends only store and search and all of them behave alike.

Every function raises `VectorizeInputError` ("<OP>_ERROR (code = N): <text>") before anything is changed.
The codes, production's and this project's own, are listed in vectorize_codes.py; query options are read as
the binding sends them and the service takes them (vectorize_wire.py).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memory_sim.bindings import limits
from memory_sim.bindings import vectorize_codes as codes
from memory_sim.bindings import vectorize_wire as wire
from memory_sim.bindings.filters import Condition, parse_filter
from memory_sim.bindings.vectorize import Metadata, MetadataIndexType, Metric, ReturnMetadata, Vector
from memory_sim.errors import VectorizeInputError

METRICS: tuple[Metric, ...] = ("cosine", "euclidean", "dot-product")
INDEX_TYPES: tuple[MetadataIndexType, ...] = ("string", "number", "boolean")
INDEX_NAME = re.compile(r"^[a-z](?:[a-z0-9-]*[a-z0-9])?$")

# The names other modules import; the numbers and their sources are in vectorize_codes.py.
CODE_BAD_VECTOR = codes.BAD_VECTOR
CODE_BAD_ID = codes.BAD_ID
CODE_BAD_METADATA = codes.BAD_METADATA
CODE_BAD_NAMESPACE = codes.BAD_NAMESPACE
CODE_BATCH = codes.BATCH
CODE_UNINDEXED = codes.UNINDEXED
CODE_INDEX_CONFIG = codes.INDEX_CONFIG
CODE_METADATA_INDEX = codes.METADATA_INDEX
CODE_FULL = codes.FULL
CODE_LIST = codes.LIST


@dataclass(frozen=True, slots=True)
class Record:
    """A validated vector: float32 values, a private copy of its metadata."""

    id: str
    values: np.ndarray
    metadata: Metadata | None
    namespace: str | None
    metadata_json: str | None = field(default=None, compare=False, repr=False)  # compact JSON, when known

    def to_vector(self) -> Vector:
        return Vector(self.id, [float(v) for v in self.values], _copy(self.metadata), self.namespace)


@dataclass(frozen=True, slots=True)
class QueryOptions:
    top_k: int
    conditions: tuple[Condition, ...]
    return_values: bool
    return_metadata: ReturnMetadata
    namespace: str | None


def _copy(metadata: Metadata | None) -> Metadata | None:
    """A private copy, as a JSON round trip gives it, without the round trip for plain values."""
    return None if metadata is None else {key: _copied(value) for key, value in metadata.items()}


def _copied(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool:
        return value
    if kind is list and all(type(v) is str for v in value):
        return list(value)
    if kind is dict:
        return {key: _copied(v) for key, v in value.items()}
    return json.loads(json.dumps(value))  # subclasses (numpy's floats, str's): JSON's plain types


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


# --- indexes ------------------------------------------------------------------------------------------------
def check_index_name(name: Any, op: str = "INDEX_GET") -> str:
    if (
        not isinstance(name, str)
        or not INDEX_NAME.fullmatch(name)
        or _utf8_len(name) > limits.VECTORIZE_MAX_INDEX_NAME_BYTES
    ):
        raise VectorizeInputError(
            op,
            f"invalid index name {name!r}: lowercase letters, digits and dashes, starting with a letter, "
            f"at most {limits.VECTORIZE_MAX_INDEX_NAME_BYTES} bytes",
            CODE_INDEX_CONFIG,
        )
    return name


def check_index_config(name: Any, dimensions: Any, metric: Any, description: Any) -> tuple[str, int, Metric, str]:
    op = "INDEX_CREATE"
    check_index_name(name, op)
    if (
        isinstance(dimensions, bool)
        or not isinstance(dimensions, int)
        or not 1 <= dimensions <= limits.VECTORIZE_MAX_DIMENSIONS
    ):
        raise VectorizeInputError(
            op,
            f"dimensions must be an integer from 1 to {limits.VECTORIZE_MAX_DIMENSIONS}, got {dimensions!r}",
            CODE_INDEX_CONFIG,
        )
    if metric not in METRICS:
        raise VectorizeInputError(op, f"metric must be one of {', '.join(METRICS)}, got {metric!r}", CODE_INDEX_CONFIG)
    if not isinstance(description, str):
        raise VectorizeInputError(op, "description must be a string", CODE_INDEX_CONFIG)
    return name, dimensions, metric, description


def index_not_found(name: str, op: str = "INDEX_GET") -> VectorizeInputError:
    return VectorizeInputError(op, f'vectorize.index.not_found - Index name "{name}"', codes.INDEX_NOT_FOUND, 404)


def index_exists(name: str) -> VectorizeInputError:
    return VectorizeInputError(
        "INDEX_CREATE", f'vectorize.index.duplicate_name - Index name "{name}"', codes.INDEX_DUPLICATE, 409
    )


# --- vectors ------------------------------------------------------------------------------------------------
def check_id(value: Any, op: str) -> str:
    if not isinstance(value, str) or not value:
        raise VectorizeInputError(op, f"vector id must be a non-empty string, got {value!r}", CODE_BAD_ID)
    size = _utf8_len(value)
    if size > limits.VECTORIZE_MAX_ID_BYTES:
        raise VectorizeInputError(
            op, f"id too long; max is {limits.VECTORIZE_MAX_ID_BYTES} bytes, got {size} bytes", codes.ID_TOO_LONG
        )
    return value


def check_ids(ids: Any, op: str, max_batch: int = limits.VECTORIZE_MAX_BATCH_BINDING) -> list[str]:
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence):
        raise VectorizeInputError(op, "ids must be an array of strings", CODE_BAD_ID)
    if len(ids) > max_batch:
        raise VectorizeInputError(op, f"too many ids: {len(ids)} > {max_batch} per request", CODE_BATCH)
    return [check_id(i, op) for i in ids]


def _holds_booleans(values: Any) -> bool:
    """True/False are not numbers here; checked with one C-level pass (`map(type)`), not a Python loop."""
    if isinstance(values, np.ndarray):
        return values.dtype == np.bool_ or (values.dtype == object and bool in set(map(type, values.tolist())))
    return bool in set(map(type, values))


def check_values(values: Any, dimensions: int, op: str, vector_id: str | None = None) -> np.ndarray:
    """A query vector (`vector_id` None) or a written one's values, as float32; the wrong length is production's
    40006 for a query and 40012 for a write, in production's words."""
    if isinstance(values, (str, bytes)):
        raise VectorizeInputError(op, "vector values must be an array of numbers", CODE_BAD_VECTOR)
    if isinstance(values, np.ndarray) and values.dtype.kind == "f":
        array = values  # floats already (an embedder's output): no float64 copy, no look for booleans
    else:
        try:
            array = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise VectorizeInputError(op, "vector values must be an array of numbers", CODE_BAD_VECTOR) from None
        if _holds_booleans(values):
            raise VectorizeInputError(op, "vector values must be an array of numbers", CODE_BAD_VECTOR)
    if array.ndim != 1:
        raise VectorizeInputError(op, "vector values must be an array of numbers", CODE_BAD_VECTOR)
    if array.shape[0] != dimensions:
        got = f"expected {dimensions} dimensions, and got {array.shape[0]} dimensions"
        if vector_id is None:
            raise VectorizeInputError(op, f"invalid query vector, {got}", codes.QUERY_DIMENSIONS)
        raise VectorizeInputError(op, f'invalid vector for id="{vector_id}", {got}', codes.WRITE_DIMENSIONS)
    single = array.astype(np.float32)  # stored as float32, as Vectorize stores them
    if not np.isfinite(single).all():
        raise VectorizeInputError(op, "vector values must be finite float32 numbers", CODE_BAD_VECTOR)
    return single


def _check_metadata_value(op: str, key: str, value: Any, depth: int) -> None:
    kind = type(value)
    if kind is str or kind is bool or kind is int or (kind is float and math.isfinite(value)):
        return  # the common cases, without isinstance chains (this runs for every value of every write)
    if isinstance(value, (str, bool)) or (isinstance(value, (int, float)) and math.isfinite(value)):
        return
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return
    if isinstance(value, dict) and depth == 0:
        _check_metadata_keys(op, value, depth + 1)
        return
    raise VectorizeInputError(
        op,
        f"metadata '{key}': values are strings, numbers, booleans, string arrays or one nested object",
        CODE_BAD_METADATA,
    )


def _check_metadata_keys(op: str, metadata: Mapping[str, Any], depth: int = 0) -> None:
    for key, value in metadata.items():
        if not isinstance(key, str) or not key or key.startswith("$") or "." in key or '"' in key:
            raise VectorizeInputError(
                op, f"invalid metadata key {key!r}: non-empty, no '.', no '\"', no leading '$'", CODE_BAD_METADATA
            )
        _check_metadata_value(op, key, value, depth)


def check_metadata(metadata: Any, op: str) -> Metadata | None:
    return _metadata_and_json(metadata, op)[0]


def _metadata_and_json(metadata: Any, op: str) -> tuple[Metadata | None, str | None]:
    """The validated private copy and its compact JSON (kept so storage need not serialise it again)."""
    if metadata is None:
        return None, None
    if not isinstance(metadata, dict):
        raise VectorizeInputError(op, "metadata must be an object", CODE_BAD_METADATA)
    _check_metadata_keys(op, metadata)
    compact = json.dumps(metadata, separators=(",", ":"), ensure_ascii=False)
    size = len(compact) if compact.isascii() else _utf8_len(compact)
    if size > limits.VECTORIZE_MAX_METADATA_BYTES:
        raise VectorizeInputError(
            op,
            f"metadata too large: {size} bytes > {limits.VECTORIZE_MAX_METADATA_BYTES} bytes per vector",
            codes.METADATA_TOO_LARGE,
        )
    return _copy(metadata), compact


def check_namespace(namespace: Any, op: str) -> str | None:
    if namespace is None:
        return None
    if not isinstance(namespace, str) or not namespace or _utf8_len(namespace) > limits.VECTORIZE_MAX_NAMESPACE_BYTES:
        raise VectorizeInputError(
            op,
            f"namespace must be a non-empty string of at most {limits.VECTORIZE_MAX_NAMESPACE_BYTES} bytes",
            CODE_BAD_NAMESPACE,
        )
    return namespace


def check_vectors(
    vectors: Any, dimensions: int, op: str, max_batch: int = limits.VECTORIZE_MAX_BATCH_BINDING
) -> list[Record]:
    """Validate a write batch; `max_batch` is 1000 through the binding, 5000 through REST."""
    if isinstance(vectors, (str, bytes, dict)) or not isinstance(vectors, Sequence):
        raise VectorizeInputError(op, "vectors must be an array", CODE_BAD_VECTOR)
    if not vectors:
        raise VectorizeInputError(op, "no vectors to write", CODE_BATCH)
    if len(vectors) > max_batch:
        raise VectorizeInputError(op, f"too many vectors: {len(vectors)} > {max_batch} per request", CODE_BATCH)
    return [_record(v, dimensions, op) for v in vectors]


def _record(vector: Any, dimensions: int, op: str) -> Record:
    if isinstance(vector, dict):
        if "id" not in vector or "values" not in vector:
            raise VectorizeInputError(op, "each vector needs an id and values", CODE_BAD_VECTOR)
        vector = Vector(vector["id"], vector["values"], vector.get("metadata"), vector.get("namespace"))
    if not isinstance(vector, Vector):
        raise VectorizeInputError(op, "each vector must be a Vector or an object with id and values", CODE_BAD_VECTOR)
    vector_id = check_id(vector.id, op)
    metadata, compact = _metadata_and_json(vector.metadata, op)
    return Record(
        vector_id,
        check_values(vector.values, dimensions, op, vector_id),
        metadata,
        check_namespace(vector.namespace, op),
        compact,
    )


# --- queries ------------------------------------------------------------------------------------------------
def check_query(
    top_k: Any,
    filter: Any,
    return_values: Any,
    return_metadata: Any,
    namespace: Any,
    indexes: Mapping[str, MetadataIndexType],
    source: Mapping[str, Any] | None = None,
) -> QueryOptions:
    """The options of a binding call: converted as workerd's binding converts them (`true` is 'all', other values
    that are not a level throw), then read as the service reads the body it is sent (40026 for a value of the
    wrong type, `false` included). `source` ({"vector": ...} or {"vectorId": ...}) only places an error's column."""
    op = "VECTOR_QUERY"
    sent = wire.sent_return_metadata(return_metadata)
    body = _body(source or {}, top_k, filter, return_values, return_metadata, namespace)
    metadata_mode = wire.service_return_metadata(sent, body)
    values = wire.service_return_values(return_values, body)
    k = wire.service_top_k(top_k, limits.VECTORIZE_DEFAULT_TOP_K, body)
    cap = (
        limits.VECTORIZE_MAX_TOP_K_WITH_VALUES_OR_METADATA
        if values or metadata_mode == "all"
        else limits.VECTORIZE_MAX_TOP_K
    )
    if k > cap:  # production's words; a cap of 50 applies with returnValues or returnMetadata 'all'
        raise VectorizeInputError(op, f"max top K is {cap}, but got {k}", codes.TOP_K)
    if k < 1:
        raise VectorizeInputError(op, f"top K must be at least 1, but got {k}", codes.TOP_K)
    conditions = () if filter is None else parse_filter(filter, op)
    check_filter_indexed(conditions, indexes, op)
    return QueryOptions(k, conditions, values, metadata_mode, check_namespace(namespace, op))


def _body(source: Mapping[str, Any], *options: Any) -> Callable[[], bytes]:
    """The JSON the binding would send, made only when an error needs its column."""

    def encode() -> bytes:
        plain = {key: [float(v) for v in value] if key == "vector" else value for key, value in source.items()}
        return wire.dumps(wire.query_body(plain, *options))

    return encode


def check_filter_indexed(conditions: tuple[Condition, ...], indexes: Mapping[str, MetadataIndexType], op: str) -> None:
    # Differs from Cloudflare on purpose: production reportedly returns no matches for a property without a
    # metadata index (UNCONFIRMED); a silent empty answer hides a missing index, so this is an error here.
    for condition in conditions:
        if condition.key not in indexes:
            raise VectorizeInputError(
                op, f"cannot filter on '{condition.key}': it has no metadata index (create one first)", CODE_UNINDEXED
            )


# --- metadata indexes and listing ----------------------------------------------------------------------------
def check_metadata_index(
    property_name: Any, index_type: Any, existing: Mapping[str, MetadataIndexType]
) -> tuple[str, MetadataIndexType]:
    op = "METADATA_INDEX_CREATE"
    if not isinstance(property_name, str) or not property_name or property_name.startswith("$") or '"' in property_name:
        raise VectorizeInputError(op, f"invalid propertyName {property_name!r}", CODE_METADATA_INDEX)
    if _utf8_len(property_name) > limits.VECTORIZE_MAX_FILTER_KEY_CHARS:
        raise VectorizeInputError(op, "propertyName too long", CODE_METADATA_INDEX)
    if index_type not in INDEX_TYPES:
        raise VectorizeInputError(
            op, f"indexType must be one of {', '.join(INDEX_TYPES)}, got {index_type!r}", CODE_METADATA_INDEX
        )
    if property_name in existing:
        raise VectorizeInputError(op, f"a metadata index on '{property_name}' already exists", CODE_METADATA_INDEX)
    if len(existing) >= limits.VECTORIZE_MAX_METADATA_INDEXES:
        raise VectorizeInputError(
            op, f"an index has at most {limits.VECTORIZE_MAX_METADATA_INDEXES} metadata indexes", CODE_METADATA_INDEX
        )
    return property_name, index_type


def check_metadata_index_delete(property_name: Any, existing: Mapping[str, MetadataIndexType]) -> str:
    if property_name not in existing:
        raise VectorizeInputError(
            "METADATA_INDEX_DELETE", f"no metadata index on {property_name!r}", CODE_METADATA_INDEX
        )
    return property_name


def check_list_count(count: Any) -> int:
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= limits.VECTORIZE_LIST_MAX_COUNT:
        raise VectorizeInputError(
            "VECTOR_LIST", f"count must be an integer from 1 to {limits.VECTORIZE_LIST_MAX_COUNT}", CODE_LIST
        )
    return count


def index_full(count: int, cap: int, op: str) -> VectorizeInputError:
    return VectorizeInputError(
        op, f"index is full: {count} vectors would exceed the limit of {cap} vectors per index", CODE_FULL
    )
