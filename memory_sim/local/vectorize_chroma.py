"""Vectorize on Chroma: durable storage in Chroma (embedded `PersistentClient` or a server over `HttpClient`),
answers planned over numpy arrays kept beside it (vectorize_arrays.py).

Query plan: a filter or a namespace leaves a set of rows, scored exactly with numpy (exact is cheap: 100k x 384
takes ~3 ms); only an unfiltered query over more than `exact_scan_limit` floats goes to Chroma's HNSW index,
whose candidates are then re-scored exactly. So results never depend on the plan, except for approximate
search error on very large unfiltered queries.

Each Chroma collection `vectorize-<name>` holds the vectors; per record the metadata JSON (`md`), the
metadata-index values it was written with (`ix`) and the namespace (`ns`). The index's own state (config,
metadata indexes, last processed mutation) is JSON in the collection's metadata, so it lives wherever Chroma
does, embedded or on a server.
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from memory_sim.bindings import limits
from memory_sim.bindings import vectorize_validation as check
from memory_sim.bindings.vectorize import IndexDescription, Metric
from memory_sim.bindings.vectorize_validation import QueryOptions, Record
from memory_sim.errors import ConfigError, MemorySimError, VectorizeUnavailable
from memory_sim.local.vectorize_arrays import ArrayTable
from memory_sim.local.vectorize_core import Clock, IndexState, QueuedIndex, Stored, new_state

PREFIX = "vectorize-"
STATE_KEY = "vectorize_state"
CHROMA_SPACE = {"cosine": "cosine", "euclidean": "l2", "dot-product": "ip"}
DEFAULT_EXACT_SCAN_LIMIT = 64_000_000  # floats scanned exactly (~170k x 384) before unfiltered queries use HNSW
LOAD_PAGE = 5000


@contextmanager
def chroma_errors(op: str) -> Iterator[None]:
    """Map Chroma's and its transport's exceptions into the project's tree, at the boundary."""
    try:
        yield
    except MemorySimError:
        raise
    except Exception as exc:  # chromadb raises many unrelated types (ChromaError, httpx, ValueError)
        raise VectorizeUnavailable(op, f"Chroma failed: {type(exc).__name__}: {exc}") from exc


class ChromaStore:
    """A `VectorStore`: writes go to Chroma first, then to the arrays; reads come from the arrays."""

    def __init__(self, collection: Any, state: IndexState, max_chroma_batch: int, exact_scan_limit: int) -> None:
        self.collection = collection
        self.table = ArrayTable(state.dimensions, state.metric)
        self._batch = max_chroma_batch
        self._exact_scan_limit = exact_scan_limit

    def load(self) -> None:
        """Rebuild the arrays from Chroma, page by page."""
        offset = 0
        while True:
            with chroma_errors("INDEX_GET"):
                page = self.collection.get(include=["embeddings", "metadatas"], limit=LOAD_PAGE, offset=offset)
            ids = page["ids"]
            if not ids:
                return
            self.table.write([_from_chroma(i, e, m) for i, e, m in zip(ids, page["embeddings"], page["metadatas"])])
            offset += len(ids)

    def count(self) -> int:
        return self.table.n

    def contains(self, ids: Sequence[str]) -> list[bool]:
        return [i in self.table.row_of for i in ids]

    def write(self, items: list[Stored]) -> None:
        for start in range(0, len(items), self._batch):
            chunk = items[start : start + self._batch]
            fresh = not any(s.record.id in self.table.row_of for s in chunk)
            with chroma_errors("VECTOR_UPSERT"):
                (self.collection.add if fresh else self.collection.upsert)(
                    ids=[s.record.id for s in chunk],
                    embeddings=np.stack([s.record.values for s in chunk]),
                    metadatas=[_to_chroma(s) for s in chunk],
                )
        self.table.write(items)

    def delete(self, ids: Sequence[str]) -> None:
        present = [i for i in dict.fromkeys(ids) if i in self.table.row_of]
        if present:
            with chroma_errors("VECTOR_DELETE"):
                self.collection.delete(ids=present)
        self.table.delete(present)

    def get(self, ids: Sequence[str]) -> list[Stored]:
        out = []
        for vid in ids:
            found = self.table.stored(vid)
            if found is not None:
                values, metadata_json, namespace, indexed = found
                metadata = None if metadata_json is None else json.loads(metadata_json)
                out.append(Stored(Record(vid, values, metadata, namespace), indexed))
        return out

    def sorted_ids(self) -> list[str]:
        return sorted(self.table.ids)

    def search(self, query: np.ndarray, options: QueryOptions) -> list[tuple[str, float]]:
        table = self.table
        if not options.conditions and table.n * table.dimensions > self._exact_scan_limit:
            return self._search_hnsw(query, options)
        keep = table.mask(options.conditions, options.namespace)
        return table.top(query, None if keep is None else np.flatnonzero(keep), options.top_k)

    def _search_hnsw(self, query: np.ndarray, options: QueryOptions) -> list[tuple[str, float]]:
        """Chroma's HNSW proposes candidates (namespace as its `where`); the arrays re-score them exactly."""
        wanted = min(self.table.n, max(4 * options.top_k, 40))
        where = None if options.namespace is None else {"ns": options.namespace}
        with chroma_errors("VECTOR_QUERY"):
            found = self.collection.query(query_embeddings=[query], n_results=wanted, where=where, include=["distances"])
        rows = np.asarray([self.table.row_of[i] for i in found["ids"][0] if i in self.table.row_of], dtype=np.int64)
        return self.table.rescore(query, rows)[: options.top_k] if rows.size else []

    def save_state(self, state: IndexState) -> None:
        with chroma_errors("INDEX_UPDATE"):
            self.collection.modify(metadata={STATE_KEY: json.dumps(state.to_json())})


def _to_chroma(stored: Stored) -> dict[str, Any]:
    record = stored.record
    out: dict[str, Any] = {"md": json.dumps(record.metadata), "ix": json.dumps(stored.indexed)}
    if record.namespace is not None:
        out["ns"] = record.namespace
    return out


def _from_chroma(vid: str, embedding: Any, meta: dict[str, Any] | None) -> Stored:
    meta = meta or {}
    values = np.asarray(embedding, dtype=np.float32)
    return Stored(Record(vid, values, json.loads(meta.get("md", "null")), meta.get("ns")), json.loads(meta.get("ix", "{}")))


class ChromaAccount:
    """`VectorizeAccount` on Chroma: a folder (`path`), a server (`host`/`port`), or in memory (neither)."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        host: str | None = None,
        port: int | None = None,
        clock: Clock = time.time,
        visibility_lag_s: float = 0.0,
        max_vectors: int = limits.VECTORIZE_MAX_VECTORS_PER_INDEX,
        max_batch: int = limits.VECTORIZE_MAX_BATCH_BINDING,
        exact_scan_limit: int = DEFAULT_EXACT_SCAN_LIMIT,
    ) -> None:
        self._clock, self._lag, self._max_vectors = clock, visibility_lag_s, max_vectors
        self._max_batch, self._exact_scan_limit = max_batch, exact_scan_limit
        self._client = _connect(path, host, port)
        with chroma_errors("INDEX_GET"):
            self._chroma_batch = int(self._client.get_max_batch_size())
        self._open: dict[str, QueuedIndex] = {}

    def create_index(self, name: str, dimensions: int, metric: Metric, description: str = "") -> IndexDescription:
        name, dimensions, metric, description = check.check_index_config(name, dimensions, metric, description)
        if self._collection(name) is not None:
            raise check.index_exists(name)
        state = new_state(name, dimensions, metric, description, self._clock)
        with chroma_errors("INDEX_CREATE"):
            self._client.create_collection(
                PREFIX + name,
                embedding_function=None,
                configuration={"hnsw": {"space": CHROMA_SPACE[metric]}},
                metadata={STATE_KEY: json.dumps(state.to_json())},
            )
        return state.describe()

    def _collection(self, name: str) -> Any | None:
        from chromadb.errors import NotFoundError

        try:
            with chroma_errors("INDEX_GET"):
                return self._client.get_collection(PREFIX + name, embedding_function=None)
        except VectorizeUnavailable as exc:
            if isinstance(exc.__cause__, (NotFoundError, ValueError)):
                return None
            raise

    def index(self, name: str) -> QueuedIndex:
        check.check_index_name(name)
        if name in self._open:
            return self._open[name]
        collection = self._collection(name)
        if collection is None:
            raise check.index_not_found(name)
        state = IndexState.from_json(json.loads(collection.metadata[STATE_KEY]))
        store = ChromaStore(collection, state, self._chroma_batch, self._exact_scan_limit)
        store.load()
        self._open[name] = QueuedIndex(
            state, store, clock=self._clock, visibility_lag_s=self._lag, max_vectors=self._max_vectors, max_batch=self._max_batch
        )
        return self._open[name]

    def get_index(self, name: str) -> IndexDescription:
        check.check_index_name(name)
        if name in self._open:
            return self._open[name].state.describe()
        collection = self._collection(name)
        if collection is None:
            raise check.index_not_found(name)
        return IndexState.from_json(json.loads(collection.metadata[STATE_KEY])).describe()

    def list_indexes(self) -> list[IndexDescription]:
        with chroma_errors("INDEX_LIST"):
            collections = self._client.list_collections()
        names = sorted(c.name[len(PREFIX) :] for c in collections if c.name.startswith(PREFIX))
        return [self.get_index(n) for n in names]

    def delete_index(self, name: str) -> None:
        check.check_index_name(name, "INDEX_DELETE")
        if self._collection(name) is None:
            raise check.index_not_found(name, "INDEX_DELETE")
        self._open.pop(name, None)
        with chroma_errors("INDEX_DELETE"):
            self._client.delete_collection(PREFIX + name)

    def close(self) -> None:
        """Apply every queued mutation (a lag does not outlive the process) and let go of the indexes."""
        for index in self._open.values():
            index.flush()
        self._open.clear()


def _connect(path: str | Path | None, host: str | None, port: int | None) -> Any:
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if host is not None or port is not None:
        with chroma_errors("INDEX_GET"):
            return chromadb.HttpClient(host=host or "127.0.0.1", port=port or 8000, settings=settings)
    if path is None:
        return chromadb.EphemeralClient(settings=settings)
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"Chroma data path {folder} is not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    with chroma_errors("INDEX_GET"):
        return chromadb.PersistentClient(path=str(folder), settings=settings)
