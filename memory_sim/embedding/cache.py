"""A persistent embedding cache: one sqlite3 file (stdlib, so it works beside either D1 engine).

Keyed by (model, pooling, sha256(text)): the same text embedded twice costs one model call, across runs.
Vectors are stored as float32 bytes. Safe to share between threads (one connection behind a lock).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    pooling TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    dimensions INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, pooling, text_sha256)
) WITHOUT ROWID
"""
_CHUNK = 500  # keys per IN (...) lookup; well under SQLite's bound-parameter limit


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    """`path=None` keeps the cache in memory (tests, one-off runs)."""

    def __init__(self, path: str | Path | None = None) -> None:
        target = ":memory:" if path is None else str(path)
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(target, check_same_thread=False)
        if path is not None:
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()

    def get_many(self, model: str, pooling: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The cached vector for each text, None where it is not cached."""
        keys = [text_key(t) for t in texts]
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), _CHUNK):
                chunk = list(dict.fromkeys(keys[start : start + _CHUNK]))
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT text_sha256, vector FROM embeddings WHERE model = ? AND pooling = ? "
                    f"AND text_sha256 IN ({marks})",
                    (model, pooling, *chunk),
                ).fetchall()
                found.update((bytes(k), np.frombuffer(v, dtype=np.float32)) for k, v in rows)
        return [found.get(k) for k in keys]

    def put_many(self, model: str, pooling: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        rows = [
            (model, pooling, text_key(t), int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes())
            for t, v in zip(texts, vectors)
        ]
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)
            self._db.commit()

    def count(self, model: str | None = None) -> int:
        with self._lock:
            if model is None:
                return int(self._db.execute("SELECT count(*) FROM embeddings").fetchone()[0])
            return int(self._db.execute("SELECT count(*) FROM embeddings WHERE model = ?", (model,)).fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> "EmbeddingCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
