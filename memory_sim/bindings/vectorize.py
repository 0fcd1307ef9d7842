"""The Vectorize V2 contract, shaped like the Workers binding (`env.VECTORIZE`) in Python naming.

`VectorizeIndex` is what a Worker's code calls; `VectorizeAccount` is index management as the REST API and
wrangler have it. Every backend (the pure oracle, Chroma embedded or over HTTP, Cloudflare's REST API)
implements both, and one contract suite runs against each. Wire shapes (camelCase) come from `to_json()`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Metric = Literal["cosine", "euclidean", "dot-product"]
MetadataIndexType = Literal["string", "number", "boolean"]
ReturnMetadata = Literal["none", "indexed", "all"]
MetadataValue = str | int | float | bool | list[str] | dict[str, Any]
Metadata = dict[str, MetadataValue]
FilterValue = str | int | float | bool | None
Filter = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Vector:
    """A vector as written: id, float values, optional metadata and namespace."""

    id: str
    values: Sequence[float]
    metadata: Metadata | None = None
    namespace: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "values": [float(v) for v in self.values]}
        if self.metadata is not None:
            out["metadata"] = self.metadata
        if self.namespace is not None:
            out["namespace"] = self.namespace
        return out

    @staticmethod
    def from_json(obj: dict[str, Any]) -> Vector:
        return Vector(obj["id"], obj["values"], obj.get("metadata"), obj.get("namespace"))


@dataclass(frozen=True, slots=True)
class Match:
    """One query match. `values`/`metadata` are present only when asked for."""

    id: str
    score: float
    values: list[float] | None = None
    metadata: Metadata | None = None
    namespace: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "score": self.score}
        for key in ("values", "metadata", "namespace"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True, slots=True)
class QueryResult:
    count: int
    matches: list[Match]

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "matches": [m.to_json() for m in self.matches]}


@dataclass(frozen=True, slots=True)
class Mutation:
    """What every write returns: an opaque id of the queued mutation."""

    mutation_id: str

    def to_json(self) -> dict[str, Any]:
        return {"mutationId": self.mutation_id}


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """`describe()` / REST `info`: counts as of the last processed mutation."""

    dimensions: int
    vector_count: int
    processed_up_to_datetime: str | None
    processed_up_to_mutation: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "dimensions": self.dimensions,
            "vectorCount": self.vector_count,
            "processedUpToDatetime": self.processed_up_to_datetime,
            "processedUpToMutation": self.processed_up_to_mutation,
        }


@dataclass(frozen=True, slots=True)
class IndexDescription:
    """REST create/get/list shape: name, config, timestamps (ISO-8601)."""

    name: str
    dimensions: int
    metric: Metric
    description: str = ""
    created_on: str = ""
    modified_on: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "config": {"dimensions": self.dimensions, "metric": self.metric},
            "created_on": self.created_on,
            "modified_on": self.modified_on,
        }


@dataclass(frozen=True, slots=True)
class MetadataIndex:
    property_name: str
    index_type: MetadataIndexType

    def to_json(self) -> dict[str, Any]:
        return {"propertyName": self.property_name, "indexType": self.index_type}


@dataclass(frozen=True, slots=True)
class VectorIdPage:
    """REST `list`: one page of ids with a cursor."""

    ids: list[str]
    total_count: int
    is_truncated: bool
    next_cursor: str | None = None
    cursor_expiration_timestamp: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "count": len(self.ids),
            "totalCount": self.total_count,
            "isTruncated": self.is_truncated,
            "vectors": [{"id": i} for i in self.ids],
        }
        if self.next_cursor is not None:
            out["nextCursor"] = self.next_cursor
        if self.cursor_expiration_timestamp is not None:
            out["cursorExpirationTimestamp"] = self.cursor_expiration_timestamp
        return out


@runtime_checkable
class VectorizeIndex(Protocol):
    """The binding of one index, as a Worker sees `env.VECTORIZE`."""

    @property
    def name(self) -> str: ...

    def insert(self, vectors: Sequence[Vector]) -> Mutation: ...

    def upsert(self, vectors: Sequence[Vector]) -> Mutation: ...

    def query(
        self,
        vector: Sequence[float],
        top_k: int = 5,
        filter: Filter | None = None,
        return_values: bool = False,
        return_metadata: ReturnMetadata | bool = "none",
        namespace: str | None = None,
    ) -> QueryResult: ...

    def query_by_id(
        self,
        id: str,
        top_k: int = 5,
        filter: Filter | None = None,
        return_values: bool = False,
        return_metadata: ReturnMetadata | bool = "none",
        namespace: str | None = None,
    ) -> QueryResult: ...

    def get_by_ids(self, ids: Sequence[str]) -> list[Vector]: ...

    def delete_by_ids(self, ids: Sequence[str]) -> Mutation: ...

    def describe(self) -> IndexInfo: ...

    # Management of this index, as REST and wrangler have it (no binding method exists for these).
    def create_metadata_index(self, property_name: str, index_type: MetadataIndexType) -> Mutation: ...

    def list_metadata_indexes(self) -> list[MetadataIndex]: ...

    def delete_metadata_index(self, property_name: str) -> Mutation: ...

    def list_vectors(self, count: int = 100, cursor: str | None = None) -> VectorIdPage: ...


@runtime_checkable
class VectorizeAccount(Protocol):
    """Index management: create / get / list / delete indexes, and a handle on one."""

    def create_index(
        self, name: str, dimensions: int, metric: Metric, description: str = ""
    ) -> IndexDescription: ...

    def get_index(self, name: str) -> IndexDescription: ...

    def list_indexes(self) -> list[IndexDescription]: ...

    def delete_index(self, name: str) -> None: ...

    def index(self, name: str) -> VectorizeIndex: ...
