"""The pure in-memory exact Vectorize backend: the oracle the other backends are tested against.

Plain dicts, one record at a time, the reference filter evaluator of bindings/filters.py, float64 scores of
the stored float32 values. Slow on purpose-free simplicity; fast enough for tests and small worlds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from memory_sim.bindings import limits
from memory_sim.bindings import vectorize_validation as check
from memory_sim.bindings.filters import matches
from memory_sim.bindings.vectorize import IndexDescription, Metric
from memory_sim.bindings.vectorize_validation import QueryOptions
from memory_sim.local.vectorize.core import Clock, IndexState, QueuedIndex, Stored, new_state


def exact_score(query: np.ndarray, values: np.ndarray, metric: Metric) -> float:
    """Contract §1.3: cosine similarity, L2 distance, or the negative dot product."""
    q, x = query.astype(np.float64), values.astype(np.float64)
    if metric == "euclidean":
        return float(math.sqrt(float(np.sum((q - x) ** 2))))
    dot = float(np.dot(q, x))
    if metric == "dot-product":
        return -dot
    norms = float(np.linalg.norm(q) * np.linalg.norm(x))
    return dot / norms if norms > 0 else 0.0


def rank_key(metric: Metric):  # type: ignore[no-untyped-def]
    """Best first: cosine by descending similarity, the others ascending; ties by id."""
    sign = -1.0 if metric == "cosine" else 1.0
    return lambda hit: (sign * hit[1], hit[0])


class OracleIndex:
    """The exact oracle's `VectorStore`: a dict, every query scored against every row; nothing is persisted."""

    def __init__(self, metric: Metric) -> None:
        self.metric = metric
        self.rows: dict[str, Stored] = {}

    def count(self) -> int:
        return len(self.rows)

    def contains(self, ids: Sequence[str]) -> list[bool]:
        return [i in self.rows for i in ids]

    def write(self, items: list[Stored]) -> None:
        for item in items:
            self.rows[item.record.id] = item

    def delete(self, ids: Sequence[str]) -> None:
        for vid in ids:
            self.rows.pop(vid, None)

    def forget_indexed(self, property_name: str) -> None:
        for vid, item in self.rows.items():
            if property_name in item.indexed:
                kept = {k: v for k, v in item.indexed.items() if k != property_name}
                self.rows[vid] = Stored(item.record, kept)

    def get(self, ids: Sequence[str]) -> list[Stored]:
        return [self.rows[i] for i in ids if i in self.rows]

    def namespaces(self, ids: Sequence[str]) -> list[str | None]:
        return [self.rows[i].record.namespace for i in ids]

    def sorted_ids(self) -> list[str]:
        return sorted(self.rows)

    def candidates(self, options: QueryOptions) -> list[Stored]:
        """Namespace first, then the filter (contract §1.2)."""
        return [
            s
            for s in self.rows.values()
            if (options.namespace is None or s.record.namespace == options.namespace)
            and matches(options.conditions, s.indexed)
        ]

    def search(self, query: np.ndarray, options: QueryOptions) -> list[tuple[str, float]]:
        hits = [(s.record.id, exact_score(query, s.record.values, self.metric)) for s in self.candidates(options)]
        return sorted(hits, key=rank_key(self.metric))[: options.top_k]

    def save_state(self, state: IndexState) -> None:
        pass


class OracleAccount:
    """`VectorizeAccount` of oracle indexes, held in memory: they vanish with the object."""

    def __init__(
        self,
        *,
        clock: Clock = time.time,
        visibility_lag_s: float = 0.0,
        max_vectors: int = limits.VECTORIZE_MAX_VECTORS_PER_INDEX,
        max_batch: int = limits.VECTORIZE_MAX_BATCH_BINDING,
    ) -> None:
        self._clock = clock
        self._lag = visibility_lag_s
        self._max_vectors = max_vectors
        self._max_batch = max_batch
        self._indexes: dict[str, QueuedIndex] = {}

    def create_index(self, name: str, dimensions: int, metric: Metric, description: str = "") -> IndexDescription:
        name, dimensions, metric, description = check.check_index_config(name, dimensions, metric, description)
        if name in self._indexes:
            raise check.index_exists(name)
        state = new_state(name, dimensions, metric, description, self._clock)
        self._indexes[name] = QueuedIndex(
            state, OracleIndex(metric), clock=self._clock, visibility_lag_s=self._lag,
            max_vectors=self._max_vectors, max_batch=self._max_batch,
        )
        return state.describe()

    def index(self, name: str) -> QueuedIndex:
        check.check_index_name(name)
        if name not in self._indexes:
            raise check.index_not_found(name)
        return self._indexes[name]

    def get_index(self, name: str) -> IndexDescription:
        return self.index(name).state.describe()

    def list_indexes(self) -> list[IndexDescription]:
        return [self._indexes[n].state.describe() for n in sorted(self._indexes)]

    def delete_index(self, name: str) -> None:
        self.index(name)
        del self._indexes[name]

    def close(self) -> None:
        for index in self._indexes.values():
            index.flush()
