"""A persistent embedding cache: one sqlite3 file (stdlib, so it works beside either D1 engine).

Keyed by (model, pooling, sha256(text)): the same text embedded twice costs one model call, across runs.
Vectors are stored as float32 bytes. Safe to share between threads (one connection behind a lock).

Only a cache: a damaged file (overwritten, truncated, emptied) is moved aside as `embeddings.sqlite.damaged-<time>`
with a warning, and an empty cache takes its place, at open or whenever SQLite first notices the damage.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from memory_sim.damage import cause_of, looks_damaged, move_aside, sqlite_file_problem

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
log = logging.getLogger(__name__)
T = TypeVar("T")


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def _create_private(path: Path) -> None:
    """A new cache file is readable by this user only (SQLite gives its journals the file's mode)."""
    import contextlib
    import os

    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600))


class EmbeddingCache:
    """`path=None` keeps the cache in memory (tests, one-off runs)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = None if path is None else Path(path)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = self._connect_or_set_aside()

    def _connect(self) -> sqlite3.Connection:
        if self.path is not None and (problem := sqlite_file_problem(self.path)) is not None:
            refused = sqlite3.DatabaseError(problem)
            refused.sqlite_errorname = "SQLITE_NOTADB"  # as SQLite would say, had it not taken it for a new file
            raise refused
        if self.path is not None:
            _create_private(self.path)
        db = sqlite3.connect(":memory:" if self.path is None else str(self.path), check_same_thread=False)
        try:
            if self.path is not None:
                db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
            db.commit()
        except BaseException:
            db.close()
            raise
        return db

    def _connect_or_set_aside(self) -> sqlite3.Connection:
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            if not self._damaged(exc):
                raise
            return self._start_afresh(exc)

    def _damaged(self, exc: sqlite3.DatabaseError) -> bool:
        """Damage, as opposed to a locked or full disk, which are not ours to move."""
        return self.path is not None and self.path.exists() and looks_damaged(exc)

    def _start_afresh(self, exc: sqlite3.DatabaseError) -> sqlite3.Connection:
        """Moves the damaged file aside (kept for a look, never deleted) and opens an empty cache in its place."""
        assert self.path is not None
        aside = move_aside(self.path)
        log.warning("the embedding cache %s is damaged (%s); moved it to %s and started an empty cache",
                    self.path, cause_of(exc), aside)
        return self._connect()

    def _using(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(connection)` under the lock; damage SQLite finds on the way sets the file aside, then one retry."""
        with self._lock:
            try:
                return work(self._db)
            except sqlite3.DatabaseError as exc:
                if not self._damaged(exc):
                    raise
                self._db.close()
                self._db = self._start_afresh(exc)
                return work(self._db)

    def get_many(self, model: str, pooling: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The cached vector for each text, None where it is not cached."""
        keys = [text_key(t) for t in texts]

        def lookup(db: sqlite3.Connection) -> dict[bytes, np.ndarray]:
            found: dict[bytes, np.ndarray] = {}
            for start in range(0, len(keys), _CHUNK):
                chunk = list(dict.fromkeys(keys[start : start + _CHUNK]))
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    f"SELECT text_sha256, vector FROM embeddings WHERE model = ? AND pooling = ? "
                    f"AND text_sha256 IN ({marks})",
                    (model, pooling, *chunk),
                ).fetchall()
                found.update((bytes(k), np.frombuffer(v, dtype=np.float32)) for k, v in rows)
            return found

        found = self._using(lookup)
        return [found.get(k) for k in keys]

    def put_many(self, model: str, pooling: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        rows = [
            (model, pooling, text_key(t), int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes())
            for t, v in zip(texts, vectors, strict=True)
        ]

        def store(db: sqlite3.Connection) -> None:
            db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)
            db.commit()

        self._using(store)

    def count(self, model: str | None = None) -> int:
        query, args = ("SELECT count(*) FROM embeddings", ()) if model is None else (
            "SELECT count(*) FROM embeddings WHERE model = ?", (model,))
        return int(self._using(lambda db: db.execute(query, args).fetchone()[0]))

    def backup(self, dest: str | Path) -> int:
        """A consistent copy through SQLite's online backup API (writers wait for it); returns the entries."""
        def copy(db: sqlite3.Connection) -> int:
            target = sqlite3.connect(str(dest))
            try:
                db.backup(target)
            finally:
                target.close()
            return int(db.execute("SELECT count(*) FROM embeddings").fetchone()[0])

        return self._using(copy)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
