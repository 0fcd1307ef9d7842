"""The part every local Vectorize backend shares: the front door (validation from bindings/), the mutation
queue with its optional visibility lag, insert-keeps-first, the vector cap, and the shape of answers.

A backend supplies a `VectorStore` (store and search only) and persists `IndexState`; `QueuedIndex` does the
rest, so the oracle and Chroma cannot drift apart on any rule of the contract.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

import numpy as np

from memory_sim.bindings import limits
from memory_sim.bindings import vectorize_validation as check
from memory_sim.bindings.filters import IndexedValue, indexed_as_written, indexed_values
from memory_sim.bindings.vectorize import (
    IndexDescription,
    IndexInfo,
    Match,
    MetadataIndex,
    MetadataIndexType,
    Metric,
    Mutation,
    QueryResult,
    Vector,
    VectorIdPage,
)
from memory_sim.bindings.vectorize_validation import QueryOptions, Record
from memory_sim.errors import VectorizeInputError

Clock = Callable[[], float]


def iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat().replace("+00:00", "Z")


@dataclass
class IndexState:
    """What an index is, beside its vectors; backends persist it durably."""

    name: str
    dimensions: int
    metric: Metric
    description: str = ""
    created_on: str = ""
    modified_on: str = ""
    metadata_indexes: dict[str, MetadataIndexType] = field(default_factory=dict)
    processed_mutation: str | None = None
    processed_at: float | None = None

    def describe(self) -> IndexDescription:
        return IndexDescription(
            self.name, self.dimensions, self.metric, self.description, self.created_on, self.modified_on
        )

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @staticmethod
    def from_json(obj: dict[str, Any]) -> IndexState:
        return IndexState(**obj)


@dataclass(frozen=True, slots=True)
class Stored:
    """A stored vector and the metadata-index values it was written with."""

    record: Record
    indexed: dict[str, IndexedValue]


class VectorStore(Protocol):
    """Storage and search for one index; everything else is `QueuedIndex`'s job."""

    def count(self) -> int: ...

    def contains(self, ids: Sequence[str]) -> list[bool]: ...

    def write(self, items: list[Stored]) -> None: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def forget_indexed(self, property_name: str) -> None:
        """Drop every stored value of a deleted metadata index."""
        ...

    def get(self, ids: Sequence[str]) -> list[Stored]: ...

    def namespaces(self, ids: Sequence[str]) -> list[str | None]:
        """The namespace of each stored id (all a match needs without values or metadata)."""
        ...

    def sorted_ids(self) -> list[str]: ...

    def search(self, query: np.ndarray, options: QueryOptions) -> list[tuple[str, float]]: ...

    def save_state(self, state: IndexState) -> None: ...


@dataclass(frozen=True, slots=True)
class PendingMutation:
    mutation_id: str
    visible_at: float
    kind: str  # insert | upsert | delete | metadata-create | metadata-delete
    payload: Any


class QueuedIndex:
    """One index: validates at the front door, queues writes, applies them when their visible time comes."""

    def __init__(
        self,
        state: IndexState,
        store: VectorStore,
        *,
        clock: Clock,
        visibility_lag_s: float,
        max_vectors: int,
        max_batch: int = limits.VECTORIZE_MAX_BATCH_BINDING,
        new_mutation_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self.state = state
        self.store = store
        self._clock = clock
        self._lag = visibility_lag_s
        self._max_vectors = max_vectors
        self._max_batch = max_batch
        self._new_id = new_mutation_id
        self._pending: list[PendingMutation] = []

    @property
    def name(self) -> str:
        return self.state.name

    # --- the mutation queue ----------------------------------------------------------------------------------
    def _enqueue(self, kind: str, payload: Any) -> Mutation:
        now = self._clock()
        mutation = PendingMutation(self._new_id(), now + self._lag, kind, payload)
        self._pending.append(mutation)
        self.process_due()
        return Mutation(mutation.mutation_id)

    def process_due(self, *, everything: bool = False) -> None:
        """Apply, in order, every queued mutation whose visible time has come (all of them when closing)."""
        now = self._clock()
        while self._pending and (everything or self._pending[0].visible_at <= now):
            self._apply(self._pending.pop(0))

    def _apply(self, mutation: PendingMutation) -> None:
        kind, payload = mutation.kind, mutation.payload
        if kind in ("insert", "upsert"):
            records: list[Record] = payload
            if kind == "insert":  # V2: the first write of an id wins; later inserts are skipped silently
                present = self.store.contains([r.id for r in records])
                records = [r for r, p in zip(records, present, strict=True) if not p]
            indexes = self.state.metadata_indexes
            self.store.write([Stored(r, indexed_values(r.metadata, indexes)) for r in records])
        elif kind == "delete":
            self.store.delete(payload)
        elif kind == "metadata-create":
            self.state.metadata_indexes[payload[0]] = payload[1]
        elif kind == "metadata-delete":
            # Vectors written before an index exists are not indexed until re-upserted (Cloudflare's rule), so a
            # deleted index's values go with it: re-creating it must not make old vectors filterable again.
            self.store.forget_indexed(payload)
            self.state.metadata_indexes.pop(payload, None)
        self.state.processed_mutation = mutation.mutation_id
        self.state.processed_at = mutation.visible_at
        self.store.save_state(self.state)

    # --- writes -----------------------------------------------------------------------------------------------
    def _unique(self, records: list[Record], keep_first: bool) -> list[Record]:
        by_id: dict[str, Record] = {}
        for record in records:
            if keep_first:
                by_id.setdefault(record.id, record)
            else:
                by_id.pop(record.id, None)
                by_id[record.id] = record
        return list(by_id.values())

    def _check_capacity(self, records: list[Record], op: str) -> None:
        queued = list(
            {r.id for m in self._pending if m.kind in ("insert", "upsert") for r in m.payload} | {r.id for r in records}
        )
        fresh = [vid for vid, stored in zip(queued, self.store.contains(queued), strict=True) if not stored]
        projected = self.store.count() + len(fresh)  # pending deletes are not counted: a conservative cap
        if projected > self._max_vectors:
            raise check.index_full(projected, self._max_vectors, op)

    def _write(self, kind: str, vectors: Sequence[Vector], op: str) -> Mutation:
        records = self._unique(
            check.check_vectors(vectors, self.state.dimensions, op, self._max_batch), kind == "insert"
        )
        self.process_due()
        self._check_capacity(records, op)
        return self._enqueue(kind, records)

    def insert(self, vectors: Sequence[Vector]) -> Mutation:
        return self._write("insert", vectors, "VECTOR_INSERT")

    def upsert(self, vectors: Sequence[Vector]) -> Mutation:
        return self._write("upsert", vectors, "VECTOR_UPSERT")

    def delete_by_ids(self, ids: Sequence[str]) -> Mutation:
        return self._enqueue("delete", check.check_ids(ids, "VECTOR_DELETE", self._max_batch))

    # --- reads ------------------------------------------------------------------------------------------------
    def query(
        self,
        vector: Sequence[float],
        top_k: int = limits.VECTORIZE_DEFAULT_TOP_K,
        filter: dict[str, Any] | None = None,
        return_values: bool = False,
        return_metadata: Any = "none",
        namespace: str | None = None,
    ) -> QueryResult:
        self.process_due()
        options = check.check_query(
            top_k, filter, return_values, return_metadata, namespace, self.state.metadata_indexes, {"vector": vector}
        )
        values = check.check_values(vector, self.state.dimensions, "VECTOR_QUERY")
        return self._answer(self.store.search(values, options), options)

    def query_by_id(
        self,
        id: str,
        top_k: int = limits.VECTORIZE_DEFAULT_TOP_K,
        filter: dict[str, Any] | None = None,
        return_values: bool = False,
        return_metadata: Any = "none",
        namespace: str | None = None,
    ) -> QueryResult:
        self.process_due()
        check.check_id(id, "VECTOR_QUERY")
        options = check.check_query(
            top_k, filter, return_values, return_metadata, namespace, self.state.metadata_indexes, {"vectorId": id}
        )
        found = self.store.get([id])
        if not found:  # an unknown id answers no matches (UNCONFIRMED: production may raise instead)
            return QueryResult(0, [])
        return self._answer(self.store.search(found[0].record.values, options), options)

    def _answer(self, hits: list[tuple[str, float]], options: QueryOptions) -> QueryResult:
        if not options.return_values and options.return_metadata == "none":  # the common query: skip decoding records
            spaces = self.store.namespaces([h[0] for h in hits])
            return QueryResult(
                len(hits),
                [Match(vid, float(score), None, None, ns) for (vid, score), ns in zip(hits, spaces, strict=True)],
            )
        rows = {s.record.id: s for s in self.store.get([h[0] for h in hits])}
        matches = [self._match(vid, score, rows[vid], options) for vid, score in hits]
        return QueryResult(len(matches), matches)

    @staticmethod
    def _match(vid: str, score: float, stored: Stored, options: QueryOptions) -> Match:
        record = stored.record
        values = [float(v) for v in record.values] if options.return_values else None
        metadata = None
        if options.return_metadata == "all":
            metadata = record.to_vector().metadata or {}
        elif options.return_metadata == "indexed":
            metadata = indexed_as_written(stored.indexed, record.metadata)
        return Match(vid, float(score), values, metadata, record.namespace)

    def get_by_ids(self, ids: Sequence[str]) -> list[Vector]:
        self.process_due()
        wanted = check.check_ids(ids, "VECTOR_GET", self._max_batch)
        return [s.record.to_vector() for s in self.store.get(wanted)]

    def describe(self) -> IndexInfo:
        self.process_due()
        at = self.state.processed_at
        return IndexInfo(
            self.state.dimensions, self.store.count(), None if at is None else iso(at), self.state.processed_mutation
        )

    # --- management -------------------------------------------------------------------------------------------
    def _projected_indexes(self) -> dict[str, MetadataIndexType]:
        indexes = dict(self.state.metadata_indexes)
        for m in self._pending:
            if m.kind == "metadata-create":
                indexes[m.payload[0]] = m.payload[1]
            elif m.kind == "metadata-delete":
                indexes.pop(m.payload, None)
        return indexes

    def create_metadata_index(self, property_name: str, index_type: MetadataIndexType) -> Mutation:
        self.process_due()
        return self._enqueue(
            "metadata-create", check.check_metadata_index(property_name, index_type, self._projected_indexes())
        )

    def list_metadata_indexes(self) -> list[MetadataIndex]:
        self.process_due()
        return [MetadataIndex(p, t) for p, t in self.state.metadata_indexes.items()]

    def delete_metadata_index(self, property_name: str) -> Mutation:
        self.process_due()
        return self._enqueue(
            "metadata-delete", check.check_metadata_index_delete(property_name, self._projected_indexes())
        )

    def list_vectors(self, count: int = limits.VECTORIZE_LIST_DEFAULT_COUNT, cursor: str | None = None) -> VectorIdPage:
        # Differs from Cloudflare: pages are not snapshot-consistent and cursors never expire.
        self.process_due()
        count = check.check_list_count(count)
        ids = self.store.sorted_ids()
        start = 0
        if cursor is not None:
            after = _decode_cursor(cursor)
            start = next((i for i, v in enumerate(ids) if v > after), len(ids))
        page = ids[start : start + count]
        truncated = start + count < len(ids)
        return VectorIdPage(page, len(ids), truncated, _encode_cursor(page[-1]) if truncated else None)

    def flush(self) -> None:
        self.process_due(everything=True)


def _encode_cursor(last_id: str) -> str:
    return base64.urlsafe_b64encode(last_id.encode("utf-8")).decode("ascii")


def _decode_cursor(cursor: str) -> str:
    try:
        return base64.urlsafe_b64decode(cursor.encode("ascii")).decode("utf-8")
    except (ValueError, UnicodeError):
        raise VectorizeInputError("VECTOR_LIST", f"invalid cursor {cursor!r}", check.CODE_LIST) from None


def new_state(name: str, dimensions: int, metric: Metric, description: str, clock: Clock) -> IndexState:
    now = iso(clock())
    return IndexState(name, dimensions, metric, description, now, now)

