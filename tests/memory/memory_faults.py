"""Fault-injecting proxies over the real bindings: same Protocols, a switch to make them fail. Not mocks:
every call that is not failed goes to the real backend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memory_sim.bindings.vectorize import QueryResult, VectorizeIndex
from memory_sim.errors import EmbeddingUnavailable, VectorizeUnavailable


class FlakyEmbedder:
    """An `Embedder` that raises EmbeddingUnavailable while `down` is True (subclasses add other reasons to fail)."""

    message = "injected: embedding provider unavailable (HTTP 503)"

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.down = False
        self.calls = self.failures = 0

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    @property
    def carries_meaning(self) -> bool | None:
        """The wrapped embedder's word on whether its vectors carry meaning (keying.env_embed asks)."""
        return getattr(self.inner, "carries_meaning", None)

    def fails(self) -> bool:
        return self.down

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        self.calls += 1
        if self.fails():
            self.failures += 1
            raise EmbeddingUnavailable(self.message)
        return self.inner.embed(texts, query=query)


class FlakyIndex:
    """A `VectorizeIndex` that fails (`down`) or answers nothing (`empty`) on query; writes fail when down."""

    def __init__(self, inner: VectorizeIndex) -> None:
        self.inner = inner
        self.down = False
        self.empty = False

    @property
    def name(self) -> str:
        return self.inner.name

    def _check(self, op: str) -> None:
        if self.down:
            raise VectorizeUnavailable(op, "injected: Status + 503")

    def query(self, vector: Sequence[float], top_k: int = 5, **kwargs: Any) -> QueryResult:
        self._check("VECTOR_QUERY")
        if self.empty:
            return QueryResult(0, [])
        return self.inner.query(vector, top_k, **kwargs)

    def upsert(self, vectors: Any) -> Any:
        self._check("VECTOR_UPSERT")
        return self.inner.upsert(vectors)

    def insert(self, vectors: Any) -> Any:
        self._check("VECTOR_INSERT")
        return self.inner.insert(vectors)

    def delete_by_ids(self, ids: Any) -> Any:
        self._check("VECTOR_DELETE")
        return self.inner.delete_by_ids(ids)

    def __getattr__(self, name: str) -> Any:  # the rest of the Protocol, passed through
        return getattr(self.inner, name)
