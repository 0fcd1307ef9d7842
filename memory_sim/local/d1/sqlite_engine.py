"""D1 on Python's sqlite3: the engine D1 itself runs, and the reference the DuckDB backend is tested against."""

from __future__ import annotations

import re
import shutil
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from memory_sim.bindings.d1 import D1Value
from memory_sim.bindings.limits import D1_MAX_DATABASE_BYTES
from memory_sim.damage import d1_damaged, looks_damaged
from memory_sim.errors import D1Error
from memory_sim.local.d1.core import D1CoreDatabase, Outcome
from memory_sim.local.d1.dialect.udfs import primary_code
from memory_sim.local.d1.sqlite_sandbox import Sandbox
from memory_sim.local.d1.time_limit import D1_QUERY_TIME_LIMIT_S

# How a database file commits (the `d1_sqlite_synchronous` setting, docs/configuration.md). Both write ahead to
# `<file>-wal` (one fsync at most per commit instead of 3-4 for the rollback journal):
#   normal  a commit is safe from a crash or kill -9 of the process; a power cut may lose the last commits
#           (SQLite's own recommendation for WAL); the WAL is synced at each checkpoint
#   full    every commit is synced to the disk before it is acknowledged: safe from a power cut too
Synchronous = Literal["normal", "full"]
SYNCHRONOUS: tuple[Synchronous, ...] = ("normal", "full")
# A full disk fails fast, as on the DuckDB engine: a write is refused while its disk has under this free. In WAL
# mode a write that fails for want of room leaves the -wal file at its size (a rollback journal was deleted), and
# the checkpoint at close may need to grow the database: stopping with room left lets both, and the reopening of
# the other stores on that disk, still happen.
MIN_FREE_BYTES = 16 * 2**20
_ROOM_MARGIN = 256 * 2**20  # with this much more free, the disk is not asked again for _ROOM_RECHECK_S
_ROOM_RECHECK_S = 0.01
_READS = ("SELECT", "EXPLAIN", "VALUES", "PRAGMA")
_WRITE_WORD = re.compile(r"\b(?:INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)


def use_wal(conn: sqlite3.Connection, synchronous: Synchronous) -> tuple[str, int]:
    """WAL journal and the synchronous level of one connection to a database file (the journal mode is kept in the
    file's header; synchronous is per connection). Returns both as SQLite then reports them (1 NORMAL, 2 FULL)."""
    if synchronous not in SYNCHRONOUS:
        raise ValueError(f"unknown synchronous level {synchronous!r}: expected 'normal' or 'full'")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
    return str(mode), int(conn.execute("PRAGMA synchronous").fetchone()[0])


def sqlite_error(exc: sqlite3.Error) -> D1Error:
    """SQLite's error as D1 words it: `<message>: SQLITE_<CODE>`, with the primary result code (D1 reports
    `UNIQUE constraint failed: t.c: SQLITE_CONSTRAINT`, not the extended SQLITE_CONSTRAINT_UNIQUE)."""
    code = getattr(exc, "sqlite_errorname", None) or "SQLITE_ERROR"
    return D1Error(f"{exc}: {primary_code(code)}")


class SqliteEngine:
    def __init__(self, path: str | Path = ":memory:", *, synchronous: Synchronous = "normal",
                 max_bytes: int = D1_MAX_DATABASE_BYTES) -> None:
        self._file = None if str(path) == ":memory:" else Path(path)
        # isolation_level=None: autocommit, as D1 runs each statement; batch() opens its own transaction.
        self._conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        try:
            self._conn.execute("PRAGMA foreign_keys = ON")  # D1 enforces foreign keys
            self._conn.execute("PRAGMA secure_delete = ON")  # freed cells are zeroed: erased text leaves the file
            page = int(self._conn.execute("PRAGMA page_size").fetchone()[0])
            # D1's size cap, SQLite's own: a write past it fails "database or disk is full" (SQLITE_FULL)
            self._conn.execute(f"PRAGMA max_page_count = {max(1, max_bytes // page)}").fetchone()
            self._conn.execute("PRAGMA schema_version").fetchone()  # reads the header: a torn file shows here
            # (journal mode, synchronous) as SQLite reports them; a database in memory has no journal to choose
            self.durability = use_wal(self._conn, synchronous) if self._file is not None else ("memory", 0)
        except sqlite3.Error as exc:
            self._conn.close()
            raise self._failure(exc) from exc
        Sandbox(self._conn)  # no ATTACH, VACUUM INTO, extensions or PRAGMAs outside D1's: no file but this one
        self._deadline: float | None = None
        self._room_until = 0.0  # until then (time.monotonic), the disk is known to have room
        # Asked every 10,000 VM steps (~1 ms): past the deadline, SQLite stops the statement (SQLITE_INTERRUPT).
        self._conn.set_progress_handler(self._past_deadline, 10_000)

    def _past_deadline(self) -> int:
        return int(self._deadline is not None and time.monotonic() > self._deadline)

    def time_limit(self, deadline: float | None) -> None:
        self._deadline = deadline

    def execute(self, sql: str, params: Sequence[D1Value]) -> Outcome:
        """One statement; outside a batch inside its own transaction, as D1 runs every query (so `PRAGMA
        foreign_keys = OFF` changes nothing and `PRAGMA defer_foreign_keys` ends with the statement)."""
        own = not self._conn.in_transaction and _first_word(sql) != "VACUUM"  # VACUUM cannot; the sandbox denies it
        if self._file is not None and _may_write(sql):
            self._check_room()
        before = self._conn.total_changes
        try:
            if own:
                self._conn.execute("BEGIN")
            cursor = self._conn.execute(sql, tuple(params))
            rows = cursor.fetchall()
            if own and self._conn.in_transaction:
                self._conn.execute("COMMIT")
        except (sqlite3.Error, OverflowError) as exc:
            if own and self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise self._failure(exc) if isinstance(exc, sqlite3.Error) else D1Error(str(exc)) from exc
        columns = [d[0] for d in cursor.description or ()]
        changes = self._conn.total_changes - before
        last = self._conn.execute("SELECT last_insert_rowid()").fetchone()[0]
        return Outcome(columns, rows, changes, int(last), changes > 0 or _is_ddl(sql))

    def _check_room(self) -> None:
        """D1Error in SQLite's words for a full database when the file's disk has under MIN_FREE_BYTES free."""
        now = time.monotonic()
        if now < self._room_until or self._file is None:
            return
        free = shutil.disk_usage(self._file.parent).free
        if free < MIN_FREE_BYTES:
            raise D1Error(f"database or disk is full ({free:,} bytes free on the disk): SQLITE_FULL")
        self._room_until = now + _ROOM_RECHECK_S if free > MIN_FREE_BYTES + _ROOM_MARGIN else 0.0

    def execute_run(self, sql: str, param_rows: Sequence[Sequence[D1Value]]) -> list[Outcome] | None:
        return None  # sqlite3 statements are cheap: one by one keeps changes and last_row_id exact

    def begin(self) -> None:
        self._conn.execute("BEGIN")

    def commit(self) -> None:
        try:
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:  # e.g. a deferred foreign key still violated: SQLite keeps the transaction open
            self.rollback()
            raise self._failure(exc) from exc

    def rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def backup(self, dest: Path) -> None:
        """SQLite's online backup API: a consistent copy, page by page, of the database as it stands (what the WAL
        holds included), written as one self-contained file (rollback journal: no -wal beside it to copy)."""
        target = sqlite3.connect(str(dest))
        try:
            self._conn.backup(target)
            target.execute("PRAGMA journal_mode = DELETE").fetchone()
        except sqlite3.Error as exc:
            raise self._failure(exc) from exc
        finally:
            target.close()

    def compact(self) -> SqliteEngine:
        """VACUUM rewrites the file (free pages written before `secure_delete` was on hold nothing after it), then
        the write-ahead log, in WAL mode, is checkpointed and truncated to nothing (a no-op in rollback mode,
        whose journal is deleted at each commit). On a connection of its own: D1's sandbox keeps both out of
        statements."""
        if self._file is None:
            return self
        own = sqlite3.connect(str(self._file), isolation_level=None)
        try:
            own.execute("PRAGMA secure_delete = ON")
            own.execute("VACUUM")
            own.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error as exc:
            raise self._failure(exc) from exc
        finally:
            own.close()
        return self

    def _failure(self, exc: sqlite3.Error) -> D1Error:
        return d1_damaged(self._file, exc) if self._file is not None and looks_damaged(exc) else sqlite_error(exc)

    def size(self) -> int:
        pages = self._conn.execute("PRAGMA page_count").fetchone()[0]
        return int(pages) * int(self._conn.execute("PRAGMA page_size").fetchone()[0])

    def close(self) -> None:
        self._conn.close()


def _may_write(sql: str) -> bool:
    """Whether the statement may write (a read is let through on a full disk)."""
    word = _first_word(sql)
    if word == "WITH":
        return _WRITE_WORD.search(sql) is not None
    return word not in _READS


def _is_ddl(sql: str) -> bool:
    return _first_word(sql) in ("CREATE", "DROP", "ALTER")


def _first_word(sql: str) -> str:
    from memory_sim.bindings.d1_sql import first_keyword

    return first_keyword(sql)


class SqliteDatabase(D1CoreDatabase):
    """`D1Database` on sqlite3. `path` may be ":memory:"."""

    def __init__(self, path: str | Path = ":memory:", *, time_limit_s: float = D1_QUERY_TIME_LIMIT_S,
                 synchronous: Synchronous = "normal", max_bytes: int = D1_MAX_DATABASE_BYTES) -> None:
        """`synchronous`: "normal" (WAL) or "full"; `max_bytes`: the database's size cap (D1's 10 GB)."""
        super().__init__(SqliteEngine(path, synchronous=synchronous, max_bytes=max_bytes), time_limit_s=time_limit_s)
