"""Vectorize over Cloudflare's REST API (contract §2) with the official SDK: `CloudflareVectorizeAccount` and
`CloudflareVectorizeIndex` implement the same contracts as the local backends.

Validation happens on Cloudflare's side (or the local server's, which uses the binding's front door), and its
error comes back as `<OP>_ERROR (code = N): <text>`. Writes are sent in batches of 5000 vectors, REST's limit,
so a binding-sized call is one request and a bigger one (push, export) several: unlike the binding, a batch
that fails part way leaves the earlier requests applied.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from memory_sim.bindings import limits
from memory_sim.bindings import vectorize_codes as codes
from memory_sim.bindings.vectorize import (
    IndexDescription,
    IndexInfo,
    Match,
    MetadataIndex,
    MetadataIndexType,
    Metric,
    Mutation,
    QueryResult,
    ReturnMetadata,
    Vector,
    VectorIdPage,
)
from memory_sim.bindings.vectorize_wire import query_body
from memory_sim.cloudflare.client import ApiFailure, CloudflareClient
from memory_sim.errors import VectorizeError, VectorizeInputError, VectorizeUnavailable

MULTIPART: Any = {"headers": {"Content-Type": "multipart/form-data"}}  # the SDK then adds the boundary

try:  # orjson (server and cloudflare extras): a query's 384-float body is most of its client-side encoding
    import orjson

    dumps: Callable[[Any], bytes] = orjson.dumps
    loads: Callable[[bytes], Any] = orjson.loads
except ImportError:  # pragma: no cover - both extras install orjson
    def dumps(body: Any) -> bytes:
        return json.dumps(body, separators=(",", ":"), allow_nan=False).encode("utf-8")

    loads = json.loads


GET_BY_IDS_MAX = limits.VECTORIZE_GET_BY_IDS_MAX_REST  # a longer list is sent in chunks


def mapper(op: str):  # type: ignore[no-untyped-def]
    """Cloudflare's answer as the binding's error for `op`: 4xx input errors, the rest unavailable."""

    def to_error(failure: ApiFailure) -> VectorizeError:
        if failure.transient or failure.final:  # final: the server's answer, not the request, was at fault
            return VectorizeUnavailable(op, failure.message, failure.code, failure.status or 503)
        return VectorizeInputError(op, failure.message, failure.code, failure.status)

    return to_error


def to_ndjson(vectors: Sequence[Vector | dict[str, Any]], op: str) -> bytes:
    lines = []
    for vector in vectors:
        obj = vector.to_json() if isinstance(vector, Vector) else vector
        try:
            lines.append(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))
        except (TypeError, ValueError) as exc:
            raise VectorizeInputError(op, f"vector is not JSON-serialisable: {exc}", codes.BAD_VECTOR) from None
    return ("\n".join(lines) + "\n").encode("utf-8")


def _description(obj: Any) -> IndexDescription:
    config = obj.config
    return IndexDescription(
        obj.name, int(config.dimensions), config.metric, obj.description or "",
        _text(obj.created_on), _text(obj.modified_on),
    )


def _text(value: Any) -> str:
    return (
        "" if value is None else value.isoformat().replace("+00:00", "Z") if hasattr(value, "isoformat") else str(value)
    )


def _match(m: Any) -> Match:
    return Match(m.id, float(m.score), m.values, m.metadata, m.namespace)


class CloudflareVectorizeIndex:
    """`VectorizeIndex` for one index of the account."""

    def __init__(
        self, client: CloudflareClient, name: str, *, max_batch: int = limits.VECTORIZE_MAX_BATCH_REST
    ) -> None:
        self._client = client
        self._name = name
        self._max_batch = max_batch

    @property
    def name(self) -> str:
        return self._name

    def _call(self, op: str, fn: Any) -> Any:
        return self._client.call(fn, mapper(op))

    @property
    def _indexes(self) -> Any:
        return self._client.sdk.vectorize.indexes

    def _write(self, kind: str, vectors: Sequence[Vector]) -> Mutation:
        op = "VECTOR_INSERT" if kind == "insert" else "VECTOR_UPSERT"
        if not vectors:
            raise VectorizeInputError(op, "no vectors to write", codes.BATCH)
        # Sent as the multipart part `vectors`, as wrangler does (contract §2), through the SDK's raw `post`:
        # SDK 5.9's typed insert/upsert send the bytes labelled application/json and warn that it is deprecated.
        path = f"{self._path}/{kind}"
        answer: Any = None
        for start in range(0, len(vectors), self._max_batch):
            files = {
                "vectors": (
                    "vectors.ndjson",
                    to_ndjson(vectors[start : start + self._max_batch], op),
                    "application/x-ndjson",
                )
            }
            answer = self._call(op, lambda sdk, f=files: sdk.post(path, files=f, options=MULTIPART, cast_to=object))
        return Mutation(answer["result"]["mutationId"])

    @property
    def _path(self) -> str:
        return f"/accounts/{quote(self._client.account_id)}/vectorize/v2/indexes/{quote(self._name)}"

    def insert(self, vectors: Sequence[Vector]) -> Mutation:
        return self._write("insert", vectors)

    def upsert(self, vectors: Sequence[Vector]) -> Mutation:
        return self._write("upsert", vectors)

    def _query(self, body: dict[str, Any]) -> QueryResult:
        # The SDK's `query` has no `vectorId` or `namespace` (contract §2), and its request machinery is most of
        # a query's client-side cost: the body is encoded here (orjson) and posted on the SDK's own connection
        # pool with its token (`CloudflareClient.post_json`), with the same retries and error mapping.
        content, path = dumps(body), f"{self._path}/query"
        result = self._call("VECTOR_QUERY", lambda sdk: loads(self._client.post_json(path, content)))["result"]
        matches = [
            Match(m["id"], float(m["score"]), m.get("values"), m.get("metadata"), m.get("namespace"))
            for m in result["matches"]
        ]
        return QueryResult(int(result["count"]), matches)

    def query(
        self,
        vector: Sequence[float],
        top_k: int = limits.VECTORIZE_DEFAULT_TOP_K,
        filter: dict[str, Any] | None = None,
        return_values: bool = False,
        return_metadata: ReturnMetadata | bool = "none",
        namespace: str | None = None,
    ) -> QueryResult:
        try:
            values = [float(v) for v in vector]
        except (TypeError, ValueError):
            raise VectorizeInputError(
                "VECTOR_QUERY", "vector values must be an array of numbers", codes.BAD_VECTOR
            ) from None
        # The body workerd's binding sends: `true` for returnMetadata becomes 'all', `false` is sent as it is
        # (and refused by the service), never both `vector` and `vectorId` (bindings/vectorize_wire.py).
        return self._query(query_body({"vector": values}, top_k, filter, return_values, return_metadata, namespace))

    def query_by_id(
        self,
        id: str,
        top_k: int = limits.VECTORIZE_DEFAULT_TOP_K,
        filter: dict[str, Any] | None = None,
        return_values: bool = False,
        return_metadata: ReturnMetadata | bool = "none",
        namespace: str | None = None,
    ) -> QueryResult:
        return self._query(query_body({"vectorId": id}, top_k, filter, return_values, return_metadata, namespace))

    def get_by_ids(self, ids: Sequence[str]) -> list[Vector]:
        found: list[Vector] = []
        ids = list(ids)
        for start in range(0, max(len(ids), 1), GET_BY_IDS_MAX):  # production answers at most 20 ids per call
            chunk = ids[start : start + GET_BY_IDS_MAX]
            answer = self._call(
                "VECTOR_GET",
                lambda sdk, c=chunk: self._indexes.get_by_ids(self._name, account_id=self._client.account_id, ids=c),
            )
            found.extend(Vector.from_json(v) for v in answer or [])
        return found

    def delete_by_ids(self, ids: Sequence[str]) -> Mutation:
        answer: Any = None
        ids = list(ids)
        for start in range(0, max(len(ids), 1), self._max_batch):
            chunk = ids[start : start + self._max_batch]
            answer = self._call(
                "VECTOR_DELETE",
                lambda sdk, c=chunk: self._indexes.delete_by_ids(self._name, account_id=self._client.account_id, ids=c),
            )
        return Mutation(answer.mutation_id)

    def describe(self) -> IndexInfo:
        info = self._call("INDEX_GET", lambda sdk: self._indexes.info(self._name, account_id=self._client.account_id))
        return IndexInfo(int(info.dimensions), int(info.vector_count), _text(info.processed_up_to_datetime) or None,
                         info.processed_up_to_mutation)

    def create_metadata_index(self, property_name: str, index_type: MetadataIndexType) -> Mutation:
        answer = self._call("METADATA_INDEX_CREATE", lambda sdk: self._indexes.metadata_index.create(
            self._name, account_id=self._client.account_id, property_name=property_name, index_type=index_type))
        return Mutation(answer.mutation_id)

    def list_metadata_indexes(self) -> list[MetadataIndex]:
        answer = self._call(
            "METADATA_INDEX_LIST",
            lambda sdk: self._indexes.metadata_index.list(self._name, account_id=self._client.account_id),
        )
        return [MetadataIndex(m.property_name, m.index_type) for m in answer.metadata_indexes or []]

    def delete_metadata_index(self, property_name: str) -> Mutation:
        answer = self._call("METADATA_INDEX_DELETE", lambda sdk: self._indexes.metadata_index.delete(
            self._name, account_id=self._client.account_id, property_name=property_name))
        return Mutation(answer.mutation_id)

    def list_vectors(self, count: int = limits.VECTORIZE_LIST_DEFAULT_COUNT, cursor: str | None = None) -> VectorIdPage:
        extra = {} if cursor is None else {"cursor": cursor}
        page = self._call(
            "VECTOR_LIST",
            lambda sdk: self._indexes.list_vectors(
                self._name, account_id=self._client.account_id, count=count, **extra
            ),
        )
        return VectorIdPage(
            [v.id for v in page.vectors],
            int(page.total_count),
            bool(page.is_truncated),
            page.next_cursor,
            _text(page.cursor_expiration_timestamp) or None,
        )


class CloudflareVectorizeAccount:
    """`VectorizeAccount` over REST; `index(name)` checks that the index exists, as the local accounts do."""

    def __init__(self, client: CloudflareClient) -> None:
        self.client = client

    @property
    def _indexes(self) -> Any:
        return self.client.sdk.vectorize.indexes

    def create_index(self, name: str, dimensions: int, metric: Metric, description: str = "") -> IndexDescription:
        made = self.client.call(lambda sdk: self._indexes.create(
            account_id=self.client.account_id, name=name, description=description,
            config={"dimensions": dimensions, "metric": metric}), mapper("INDEX_CREATE"))
        return _description(made)

    def get_index(self, name: str) -> IndexDescription:
        return _description(
            self.client.call(
                lambda sdk: self._indexes.get(name, account_id=self.client.account_id), mapper("INDEX_GET")
            )
        )

    def list_indexes(self) -> list[IndexDescription]:
        page = self.client.call(lambda sdk: self._indexes.list(account_id=self.client.account_id), mapper("INDEX_LIST"))
        return [_description(d) for d in page.result or []]

    def delete_index(self, name: str) -> None:
        self.client.call(
            lambda sdk: self._indexes.delete(name, account_id=self.client.account_id), mapper("INDEX_DELETE")
        )

    def index(self, name: str) -> CloudflareVectorizeIndex:
        self.get_index(name)
        return CloudflareVectorizeIndex(self.client, name)

    def close(self) -> None:
        pass
