"""A deterministic embedder for fast tests: a bag of hashed words, no model, no torch.

Texts that share words get similar vectors (cosine grows with the overlap), so recall tests can reason about
which memory should come first without loading a model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens; the whole text when it has none, so no text maps to the zero vector."""
    return _WORD.findall(text.lower()) or [text]


def _bucket(word: str, dimensions: int) -> tuple[int, float]:
    # blake2b is stable across processes (unlike hash()), so vectors are reproducible everywhere.
    digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    sign = 1.0 if (value >> 63) & 1 else -1.0
    return value % dimensions, sign


class HashingEmbedder:
    """Token-hashing bag of words: unit-norm float32 vectors of `dimensions`, identical for identical texts."""

    carries_meaning = False  # texts with no word in common get orthogonal vectors: no model reads meaning from them

    def __init__(self, dimensions: int = 64, model: str = "fake/hashing") -> None:
        if dimensions < 1:
            raise ValueError(f"dimensions must be at least 1, got {dimensions}")
        self._dimensions = dimensions
        self._model = model
        self.calls = 0  # how many embed() calls reached this embedder (tests count them)

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        # `query` changes nothing: this model has no query instruction.
        self.calls += 1
        out = np.zeros((len(texts), self._dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._vector(text)
        return out

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self._dimensions, dtype=np.float64)
        for word in words(text):
            index, sign = _bucket(word, self._dimensions)
            vector[index] += sign
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:  # words cancelled out exactly: fall back to the first word's bucket
            index, sign = _bucket(words(text)[0], self._dimensions)
            vector[index] = sign
            norm = 1.0
        return (vector / norm).astype(np.float32)

    def __repr__(self) -> str:
        return f"HashingEmbedder(dimensions={self._dimensions}, model={self._model!r})"
