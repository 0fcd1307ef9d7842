"""Vectorize on Chroma: durable storage in Chroma (embedded `PersistentClient` or a server over `HttpClient`),
answers planned over numpy arrays kept beside it (arrays.py).

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
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import numpy as np

from memory_sim.bindings import limits
from memory_sim.bindings import vectorize_validation as check
from memory_sim.bindings.vectorize import IndexDescription, Metric
from memory_sim.bindings.vectorize_validation import QueryOptions, Record
from memory_sim.damage import index_damaged, looks_damaged, sqlite_file_problem
from memory_sim.errors import ConfigError, IndexDamaged, MemorySimError, VectorizeUnavailable
from memory_sim.local.vectorize import chroma_erase
from memory_sim.local.vectorize import snapshot as snapshot
from memory_sim.local.vectorize.arrays import ArrayTable
from memory_sim.local.vectorize.chroma_process import ProcessClient
from memory_sim.local.vectorize.core import Clock, IndexState, QueuedIndex, Stored, new_state

PREFIX = "vectorize-"
STATE_KEY = "vectorize_state"
CHROMA_SPACE = {"cosine": "cosine", "euclidean": "l2", "dot-product": "ip"}
DEFAULT_EXACT_SCAN_LIMIT = 64_000_000  # floats scanned exactly (~170k x 384) before unfiltered queries use HNSW
LOAD_PAGE = 5000
CLOSE_DEADLINE_S = 60.0
# Records per Chroma call: each call holds the GIL throughout (overwriting costs 4-25 ms a record, adding ~0.5 ms),
# so these bound how long the rest of the process waits for embedded Chroma in it (the server runs Chroma in a
# process of its own instead: chroma_process.py)
OVERWRITE_CHUNK = 64
ADD_CHUNK = 512
MIN_FREE_BYTES = 16 * 2**20  # below this free on its disk, writes are refused at once (Chroma may hang on a full one)
DEFAULT_SNAPSHOT_EVERY = 50_000  # rows changed before a snapshot is written without waiting for close()
SNAPSHOTS = "snapshots"
CHROMA_FILE = "chroma.sqlite3"  # where embedded Chroma keeps its catalogue and records, in its folder


@contextmanager
def chroma_errors(op: str, folder: Path | None = None) -> Iterator[None]:
    """Map Chroma's and its transport's exceptions into the project's tree, at the boundary. With the folder
    of an embedded Chroma, damaged files become `IndexDamaged`, which names them and the way back."""
    try:
        yield
    except MemorySimError:
        raise
    except Exception as exc:  # chromadb raises many unrelated types (ChromaError, httpx, ValueError)
        if folder is not None and looks_damaged(exc):
            raise index_damaged(op, folder, exc, folder / CHROMA_FILE) from exc  # the only SQLite file Chroma keeps
        raise VectorizeUnavailable(op, f"Chroma failed: {type(exc).__name__}: {exc}") from exc


def disk_room(op: str, folder: Path | None, min_free: int = MIN_FREE_BYTES) -> None:
    """VectorizeUnavailable at once when the disk holding embedded Chroma's folder is (nearly) full: Chroma's own
    writes there may hang instead of failing, and its snapshot and close need room too."""
    if folder is None:
        return
    import shutil

    free = shutil.disk_usage(folder).free
    if free < min_free:
        raise VectorizeUnavailable(op, f"the disk holding {folder} is full ({free:,} bytes free; writes stop below "
                                   f"{min_free:,}): free some space, then write again")


class ChromaStore:
    """A `VectorStore`: writes go to Chroma first, then to the arrays; reads come from the arrays.

    With a snapshot path (embedded Chroma), the arrays are saved beside Chroma on `close()` and after
    `snapshot_every` rows written, and loaded on open when their tag matches Chroma's state. The file on disk
    is removed before the first change that would make it stale, so a crash between a Chroma write and the
    state's update can never leave a snapshot that looks current.
    """

    def __init__(
        self, collection: Any, state: IndexState, max_chroma_batch: int, exact_scan_limit: int,
        snapshot_path: Path | None = None, snapshot_every: int = DEFAULT_SNAPSHOT_EVERY, folder: Path | None = None,
    ) -> None:
        self.collection = collection
        self.folder = folder  # embedded Chroma's folder: damage found in it is named, and can be set aside
        self.table = ArrayTable(state.dimensions, state.metric)
        self._batch = max_chroma_batch
        self._exact_scan_limit = exact_scan_limit
        self._snapshot_path, self._snapshot_every = snapshot_path, snapshot_every
        self._live_tag: dict[str, Any] | None = None  # the tag of the snapshot on disk, while it is current
        self._written = 0  # rows changed since the last snapshot
        self._state = state
        self._mutation = state.processed_mutation  # the last mutation Chroma's stored state records
        self._saved_shape = _shape(state)  # the state Chroma holds, less the last mutation
        self._unsaved: IndexState | None = None  # a state newer than Chroma's only by its last mutation
        self.loaded_from_snapshot = False

    def load(self) -> None:
        """The arrays from a matching snapshot, else rebuilt from Chroma page by page."""
        if self._snapshot_path is not None:
            # The mutation id alone decides: every change through this class moves it, and the file is deleted
            # before Chroma changes. (Any Chroma read, even count(), loads its segments: 0.5 s, 200 MB at 100k.)
            table = snapshot.load(self._snapshot_path, self._mutation, self._state.dimensions, self._state.metric)
            if table is not None:
                self.table, self.loaded_from_snapshot = table, True
                self._live_tag = snapshot.tag_of(self._mutation, table.n)
                return
        self._rebuild()
        self._written = self.table.n

    def _rebuild(self) -> None:
        offset = 0
        while True:
            with chroma_errors("INDEX_GET", self.folder):
                page = self.collection.get(include=["embeddings", "metadatas"], limit=LOAD_PAGE, offset=offset)
            ids = page["ids"]
            if not ids:
                return
            self.table.write(
                [_from_chroma(i, e, m) for i, e, m in zip(ids, page["embeddings"], page["metadatas"], strict=True)]
            )
            offset += len(ids)

    def _changing(self, rows: int) -> None:
        """Called before Chroma changes: the snapshot on disk is about to be stale."""
        if self._live_tag is not None and self._snapshot_path is not None:
            self._snapshot_path.unlink(missing_ok=True)
            self._live_tag = None
        self._written += rows

    def count(self) -> int:
        return self.table.n

    def contains(self, ids: Sequence[str]) -> list[bool]:
        return [i in self.table.row_of for i in ids]

    def write(self, items: list[Stored]) -> None:
        if not items:
            return
        disk_room("VECTOR_UPSERT", self.folder)
        self._changing(len(items))
        texts = [_metadata_json(s.record) for s in items]
        start = 0
        while start < len(items):
            # Chroma holds the GIL for a whole call (an upsert overwriting 5,000 ids: 20 s with every other thread of
            # the process, the server's event loop included, frozen): small calls let the others run in between
            overwrite = items[start].record.id in self.table.row_of
            size = min(self._batch, OVERWRITE_CHUNK if overwrite else ADD_CHUNK)
            chunk, chunk_texts = items[start : start + size], texts[start : start + size]
            fresh = not any(s.record.id in self.table.row_of for s in chunk)
            with chroma_errors("VECTOR_UPSERT", self.folder):
                (self.collection.add if fresh else self.collection.upsert)(
                    ids=[s.record.id for s in chunk],
                    embeddings=np.stack([s.record.values for s in chunk]),
                    metadatas=[_to_chroma(s, t) for s, t in zip(chunk, chunk_texts, strict=True)],
                )
            start += size
        self.table.write(items, texts)

    def delete(self, ids: Sequence[str]) -> None:
        present = [i for i in dict.fromkeys(ids) if i in self.table.row_of]
        if present:
            self._changing(len(present))
            with chroma_errors("VECTOR_DELETE", self.folder):
                for start in range(0, len(present), OVERWRITE_CHUNK):  # in small calls too (see write)
                    self.collection.delete(ids=present[start : start + OVERWRITE_CHUNK])
        self.table.delete(present)

    def forget_indexed(self, property_name: str) -> None:
        """A deleted metadata index leaves no values behind, in Chroma's copy and in the arrays."""
        column = self.table.columns.get(property_name)
        if column is None:
            return
        holders = [self.table.row_of[i] for i in self.table.forget(property_name)]
        self.table.columns[property_name] = column  # kept until Chroma agrees, so a failure changes nothing
        self._changing(len(holders))
        for start in range(0, len(holders), self._batch):
            rows = holders[start : start + self._batch]
            fields = [{k: v for k, v in self.table.indexed(r).items() if k != property_name} for r in rows]
            with chroma_errors("METADATA_INDEX_DELETE", self.folder):
                self.collection.update(
                    ids=[self.table.ids[r] for r in rows],
                    metadatas=[{VALUE_KEY: _value(self.table.metadata_json[r], f)}
                               for r, f in zip(rows, fields, strict=True)],
                )
        del self.table.columns[property_name]

    def get(self, ids: Sequence[str]) -> list[Stored]:
        out = []
        for vid in ids:
            found = self.table.stored(vid)
            if found is not None:
                values, metadata_json, namespace, indexed = found
                metadata = None if metadata_json is None else json.loads(metadata_json)
                out.append(Stored(Record(vid, values, metadata, namespace), indexed))
        return out

    def namespaces(self, ids: Sequence[str]) -> list[str | None]:
        table = self.table
        codes = table.ns_code[[table.row_of[i] for i in ids]].tolist()
        return [None if c < 0 else table.ns_names[c] for c in codes]

    def sorted_ids(self) -> list[str]:
        return sorted(self.table.ids)

    def search(self, query: np.ndarray, options: QueryOptions) -> list[tuple[str, float]]:
        table = self.table
        if not options.conditions and table.n * table.dimensions > self._exact_scan_limit:
            return self._search_hnsw(query, options)
        return table.top(query, table.candidates(options.conditions, options.namespace), options.top_k)

    def _search_hnsw(self, query: np.ndarray, options: QueryOptions) -> list[tuple[str, float]]:
        """Chroma's HNSW proposes candidates (namespace as its `where`); the arrays re-score them exactly."""
        wanted = min(self.table.n, max(4 * options.top_k, 40))
        where = None if options.namespace is None else {"ns": options.namespace}
        with chroma_errors("VECTOR_QUERY", self.folder):
            found = self.collection.query(
                query_embeddings=[query], n_results=wanted, where=where, include=["distances"]
            )
        rows = np.asarray([self.table.row_of[i] for i in found["ids"][0] if i in self.table.row_of], dtype=np.int64)
        return self.table.rescore(query, rows)[: options.top_k] if rows.size else []

    def save_state(self, state: IndexState) -> None:
        """Stores the state in Chroma when more than the last mutation changed (a metadata index, the
        description); after a write alone it is stored with the next snapshot, the next such change or at
        close, sparing a Chroma write per mutation. A crash meanwhile leaves an older mutation id in Chroma and
        no snapshot (deleted before the write): the next open rebuilds the arrays from Chroma, which has every
        vector; only `processed_up_to_mutation` reads older until the next write."""
        if _shape(state) == self._saved_shape:
            self._unsaved = state
        else:
            self._store_state(state)
        if self._written >= self._snapshot_every:
            self.snapshot()

    def _store_state(self, state: IndexState) -> None:
        with chroma_errors("INDEX_UPDATE", self.folder):
            self.collection.modify(metadata={STATE_KEY: json.dumps(state.to_json())})
        self._mutation, self._saved_shape, self._unsaved = state.processed_mutation, _shape(state), None

    def snapshot(self) -> None:
        """Save the arrays beside Chroma, tagged with the state Chroma now holds (embedded backend only).
        A state-only change (a metadata index created) leaves the old file with an old tag: ignored on open."""
        if self._unsaved is not None:
            self._store_state(self._unsaved)  # the tag must name the mutation Chroma's stored state records
        tag = snapshot.tag_of(self._mutation, self.table.n)
        if self._snapshot_path is None or tag == self._live_tag:
            return
        try:
            snapshot.save(self.table, self._snapshot_path, tag)
        except OSError:
            return  # a snapshot is only a cache: without one, the next open rebuilds from Chroma
        self._live_tag, self._written = tag, 0


def _shape(state: IndexState) -> str:
    """The state less the last mutation's id and time, as text (a copy: the state's own dicts change in place):
    what must reach Chroma at once when it changes."""
    rest = {k: v for k, v in state.to_json().items() if k not in ("processed_mutation", "processed_at")}
    return json.dumps(rest, sort_keys=True)


def _metadata_json(record: Record) -> str | None:
    if record.metadata_json is not None:
        return record.metadata_json
    return None if record.metadata is None else json.dumps(record.metadata, separators=(",", ":"), ensure_ascii=False)


# A vector's metadata and its indexed values, as one JSON array under one Chroma metadata key: Chroma stores a
# row per key and each key costs its add (10,000 vectors added: 2,851/s with one key, 2,368/s with two). Vectors
# written before held them under two keys, "md" and "ix", read still.
VALUE_KEY = "v"


def _value(metadata_json: str | None, indexed: dict[str, Any]) -> str:
    return f"[{metadata_json or 'null'},{json.dumps(indexed)}]"


def _to_chroma(stored: Stored, metadata_json: str | None) -> dict[str, Any]:
    record = stored.record
    out: dict[str, Any] = {VALUE_KEY: _value(metadata_json, stored.indexed)}
    if record.namespace is not None:
        out["ns"] = record.namespace
    return out


def _from_chroma(vid: str, embedding: Any, meta: dict[str, Any] | None) -> Stored:
    meta = meta or {}
    values = np.asarray(embedding, dtype=np.float32)
    if VALUE_KEY in meta:
        metadata, indexed = json.loads(meta[VALUE_KEY])
    else:
        metadata, indexed = json.loads(meta.get("md", "null")), json.loads(meta.get("ix", "{}"))
    return Stored(Record(vid, values, metadata, meta.get("ns")), indexed)


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
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
        own_process: bool = False,
    ) -> None:
        """`own_process`: embedded Chroma runs in a child process (chroma_process.py), so its calls, which hold
        the GIL throughout, never stall this process's other threads (the server's choice)."""
        self._clock, self._lag, self._max_vectors = clock, visibility_lag_s, max_vectors
        self._own_process = own_process
        self._max_batch, self._exact_scan_limit, self._snapshot_every = max_batch, exact_scan_limit, snapshot_every
        embedded = path is not None and host is None and port is None
        self.folder = Path(path) if embedded and path is not None else None  # embedded Chroma's files
        self._snapshots = self.folder / SNAPSHOTS if self.folder is not None else None
        self._client = _connect(path, host, port, own_process)
        self._released = False
        self._open: dict[str, QueuedIndex] = {}
        with self._chroma("INDEX_GET"):
            self._chroma_batch = int(self._client.get_max_batch_size())

    @property
    def chroma_process(self) -> ProcessClient | None:
        """The child process holding Chroma (`own_process`), else None."""
        return self._client if isinstance(self._client, ProcessClient) else None

    @property
    def process_gone(self) -> bool:
        """Whether Chroma's child process (`own_process`) has died: every call fails until `abandon()` and a
        fresh ChromaAccount on the folder."""
        chroma = self.chroma_process
        return chroma is not None and not self._released and not chroma.alive

    def abandon(self) -> None:
        """Let go of the indexes and the client without settling (their Chroma is gone): nothing is saved, so the
        next ChromaAccount on the folder rebuilds the arrays from what Chroma holds. Mutations still waiting for a
        visibility lag are dropped, as a crash drops them."""
        self._open.clear()
        self._release()

    @contextmanager
    def _chroma(self, op: str) -> Iterator[None]:
        """Chroma's errors mapped; on damage, Chroma's client is let go first, so the folder can be moved aside
        (Chroma shares one open system per folder in a process, and would otherwise keep the damaged files open)."""
        try:
            with chroma_errors(op, self.folder):
                yield
        except IndexDamaged:
            self._release()
            raise

    def create_index(self, name: str, dimensions: int, metric: Metric, description: str = "") -> IndexDescription:
        name, dimensions, metric, description = check.check_index_config(name, dimensions, metric, description)
        if self._collection(name) is not None:
            raise check.index_exists(name)
        state = new_state(name, dimensions, metric, description, self._clock)
        with self._chroma("INDEX_CREATE"):
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
            with self._chroma("INDEX_GET"):
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
        store = ChromaStore(
            collection,
            state,
            self._chroma_batch,
            self._exact_scan_limit,
            self._snapshot_file(name),
            self._snapshot_every,
            self.folder,
        )
        with self._chroma("INDEX_GET"):
            store.load()
        self._open[name] = QueuedIndex(
            state,
            store,
            clock=self._clock,
            visibility_lag_s=self._lag,
            max_vectors=self._max_vectors,
            max_batch=self._max_batch,
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

    def stored_count(self, name: str) -> int:
        """How many vectors Chroma itself holds for the index (loads its segments: for checks, not queries)."""
        collection = self._collection(name)
        if collection is None:
            raise check.index_not_found(name)
        with self._chroma("INDEX_GET"):
            return int(collection.count())

    def list_indexes(self) -> list[IndexDescription]:
        with self._chroma("INDEX_LIST"):
            collections = self._client.list_collections()
        names = sorted(c.name[len(PREFIX) :] for c in collections if c.name.startswith(PREFIX))
        return [self.get_index(n) for n in names]

    def delete_index(self, name: str) -> None:
        check.check_index_name(name, "INDEX_DELETE")
        if self._collection(name) is None:
            raise check.index_not_found(name, "INDEX_DELETE")
        self._open.pop(name, None)
        snapshot_file = self._snapshot_file(name)
        if snapshot_file is not None:
            snapshot_file.unlink(missing_ok=True)
        with self._chroma("INDEX_DELETE"):
            self._client.delete_collection(PREFIX + name)

    def _snapshot_file(self, name: str) -> Path | None:
        return None if self._snapshots is None else self._snapshots / f"{name}.snapshot"

    def settle(self) -> dict[str, int]:
        """Apply every queued mutation and save each open index's snapshot (embedded Chroma): afterwards the
        folder holds all there is. Returns each open index's vector count."""
        counts = {}
        for name, index in self._open.items():
            index.flush()
            store = index.store
            if isinstance(store, ChromaStore):
                store.snapshot()
            counts[name] = store.count()
        return counts

    def backup(self, dest: Path) -> dict[str, int]:
        """Copies embedded Chroma's folder (and the snapshots in it) to `dest`, settled first. The caller makes
        sure no write is in flight (the local bindings are not thread-safe: one owner calls them at a time)."""
        import shutil

        if self.folder is None:
            raise ConfigError("only an embedded Chroma folder can be backed up here; back up a Chroma server on it")
        counts = self.settle()
        shutil.copytree(self.folder, dest)
        return counts

    def compact(self) -> None:
        """Removed records leave embedded Chroma's files (chroma_erase.py): settled and snapshotted first, the
        client is let go; a fresh one purges each index's log; `chroma vacuum` rewrites the file; the client is
        opened again and each open index carries on with its arrays (a Chroma server purges its own log)."""
        if self.folder is None:
            return
        self.settle()
        self._release()
        client = _connect(self.folder, None, None, self._own_process)
        try:
            with chroma_errors("INDEX_COMPACT", self.folder):
                for collection in client.list_collections():
                    if collection.name.startswith(PREFIX):
                        found = client.get_collection(collection.name, embedding_function=None)
                        state = IndexState.from_json(json.loads(found.metadata[STATE_KEY]))
                        chroma_erase.purge_log(found, state.dimensions)
        finally:
            with suppress(Exception):
                client.close()
            chroma_erase.vacuum(self.folder)
            self._client, self._released = _connect(self.folder, None, None, self._own_process), False
            for name, index in self._open.items():
                store = index.store
                if isinstance(store, ChromaStore):
                    store.collection = self._client.get_collection(PREFIX + name, embedding_function=None)

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        """Apply every queued mutation (a lag does not outlive the process), save each index's snapshot
        (embedded Chroma), let go of the indexes and of Chroma's client; within `deadline_s` (Chroma on a full disk
        may never return: then VectorizeUnavailable, and the process's exit lets go of the rest)."""
        failures: list[BaseException] = []

        def settle_and_release() -> None:
            try:
                self.settle()
            except BaseException as exc:  # noqa: BLE001 - raised on the caller's thread below
                failures.append(exc)
            finally:
                self._open.clear()
                self._release()

        worker = threading.Thread(target=settle_and_release, name="chroma-close", daemon=True)
        worker.start()
        worker.join(deadline_s)
        if worker.is_alive():
            raise VectorizeUnavailable("INDEX_CLOSE", f"Chroma did not close within {deadline_s:g} s (a full disk?); "
                                       "what was acknowledged is in D1, and `memory-sim check --repair` rebuilds "
                                       "the index from it if needed")
        if failures:
            raise failures[0]

    def _release(self) -> None:
        if self._released:
            return
        self._released = True
        close = getattr(self._client, "close", None)  # chromadb >= 1.4: the last client out stops Chroma's system
        if close is not None:
            with suppress(Exception):  # a client over damaged files may fail to stop cleanly; it is let go either way
                close()


def _connect(path: str | Path | None, host: str | None, port: int | None, own_process: bool = False) -> Any:
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
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)  # the data is this user's only
    problem = sqlite_file_problem(folder / CHROMA_FILE)  # Chroma would take an emptied file for a new, empty one
    if problem is not None:
        raise index_damaged("INDEX_GET", folder, problem, folder / CHROMA_FILE)
    with chroma_errors("INDEX_GET", folder):
        if own_process:  # a failed start leaves nothing cached behind: the child is gone
            return ProcessClient(str(folder))
        try:
            return chromadb.PersistentClient(path=str(folder), settings=settings)
        except Exception as failed:
            # chromadb 1.5 keeps a system that failed to start (e.g. over a damaged file) cached for the folder, and
            # every later client there fails with AttributeError; the next client built over it drops it as it
            # fails. Build that one now, so the folder opens afresh once its files are moved aside or put right.
            try:
                return chromadb.PersistentClient(path=str(folder), settings=settings)
            except Exception:
                raise failed from None
