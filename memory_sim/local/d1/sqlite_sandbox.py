"""SQLite's authorizer around every sqlite3 connection that runs D1 SQL: the sqlite engine, the DuckDB engine's
schema mirror and the sqlite3 that answers delegated functions. D1 SQL never reaches a file but its own.

The authorizer is SQLite's own mechanism: SQLite asks it about every action a statement will take while it
compiles the statement (also the statements SQLite runs inside VACUUM or ALTER TABLE), so a keyword hidden in a
string literal or a comment cannot slip past it. Denied, always: ATTACH and DETACH (VACUUM and VACUUM INTO attach
a database too), PRAGMAs outside D1's list, load_extension() and fts3_tokenizer(), virtual tables of modules other
than full-text search and R*Tree, and any database other than `main` and `temp`. A denied statement fails with
SQLite's own words, `not authorized` (SQLITE_AUTH), as on D1.

Modes, for the schema mirror (`use`): `ENGINE` (D1's SQL, the sqlite engine), `READ` (user statements the mirror
answers: reads only, of the schema, never of a table's rows), `SCHEMA` (DDL, and the replay of the DDL ledger:
schema changes only, no PRAGMA at all), `CHECK` (a user statement compiled under EXPLAIN, never run, for SQLite's
verdict on it: reads and writes of tables may be compiled; no PRAGMA, no transaction).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from memory_sim.bindings.limits import D1_MAX_STRING_OR_BLOB_BYTES

ENGINE, READ, SCHEMA, CHECK = "engine", "read", "schema", "check"

# D1's documented PRAGMAs (Cloudflare, "SQL statements"), plus page_count/page_size (size_after).
_PRAGMA_READS = frozenset({
    "table_list", "table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    "foreign_key_check", "quick_check", "page_count", "page_size",
    "data_version",  # read by FTS5 whenever it opens its tables: a change counter, read-only in SQLite
})
_PRAGMA_SETTINGS = frozenset({
    "foreign_keys", "defer_foreign_keys", "case_sensitive_like", "ignore_check_constraints", "legacy_alter_table",
    "recursive_triggers", "reverse_unordered_selects", "optimize",
})
_DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit"})
_MODULES = frozenset({"fts3", "fts4", "fts5", "fts4aux", "fts5vocab", "rtree", "rtree_i32"})
_SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_temp_master", "sqlite_schema", "sqlite_temp_schema"})
# Tables the mirror may read for a user: the schema, and SQLite's table-valued functions over it.
_READ_ONLY_SOURCES = ("pragma_", "json_each", "json_tree")
_WRITES = frozenset(
    getattr(sqlite3, name) for name in dir(sqlite3)
    if name.startswith(("SQLITE_CREATE_", "SQLITE_DROP_")) or name in (
        "SQLITE_ALTER_TABLE", "SQLITE_INSERT", "SQLITE_DELETE", "SQLITE_ANALYZE", "SQLITE_REINDEX",
        "SQLITE_TRANSACTION", "SQLITE_SAVEPOINT",
    )
)


class Sandbox:
    """The authorizer of one connection, switched between modes with `use` (which makes SQLite re-check any
    statement it had compiled under the previous mode)."""

    def __init__(self, conn: sqlite3.Connection, mode: str = ENGINE) -> None:
        self._conn = conn
        self.read_data_table = False  # READ mode: a statement tried to read a table's rows (the caller resets it)
        if hasattr(conn, "enable_load_extension"):  # absent where Python was built without extension loading
            conn.enable_load_extension(False)
        conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        # D1's 2,000,000 bytes per string, blob or row, on computed values too (printf, zeroblob, ||): SQLite
        # itself refuses with "string or blob too big" before making one
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, D1_MAX_STRING_OR_BLOB_BYTES)
        self.mode = ""
        self.use(mode)

    def use(self, mode: str) -> None:
        if mode != self.mode:
            self.mode = mode
            self._conn.set_authorizer(_POLICIES[mode](self))


def _base(action: int, arg1: str | None, arg2: str | None, database: str | None) -> bool:
    """True where every mode allows the action (before the mode's own rules)."""
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return False
    if database is not None and database not in ("main", "temp"):
        return False
    if action == sqlite3.SQLITE_FUNCTION:
        return (arg2 or "").lower() not in _DENIED_FUNCTIONS
    if action == sqlite3.SQLITE_CREATE_VTABLE:
        return (arg2 or "").lower() in _MODULES
    return True


def _pragma_allowed(name: str | None, value: str | None, *, settings: bool) -> bool:
    pragma = (name or "").lower()
    if pragma in _PRAGMA_READS:
        return True
    return pragma in _PRAGMA_SETTINGS and (settings or value is None)


def _engine(_: Sandbox) -> Callable[..., int]:
    def authorize(action: int, arg1: Any, arg2: Any, database: Any, _trigger: Any) -> int:
        if not _base(action, arg1, arg2, database):
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_PRAGMA and not _pragma_allowed(arg1, arg2, settings=True):
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    return authorize


def _read(sandbox: Sandbox) -> Callable[..., int]:
    def authorize(action: int, arg1: Any, arg2: Any, database: Any, _trigger: Any) -> int:
        if not _base(action, arg1, arg2, database):
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_PRAGMA:
            return sqlite3.SQLITE_OK if _pragma_allowed(arg1, arg2, settings=False) else sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_UPDATE and (arg1 or "").lower() in _SCHEMA_TABLES:
            return sqlite3.SQLITE_OK  # SQLite's own bookkeeping when a table-valued function is first used
        if action in _WRITES or action == sqlite3.SQLITE_UPDATE:
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_READ and not _schema_source(arg1):
            sandbox.read_data_table = True  # the mirror holds no rows: an answer would be silently empty
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    return authorize


def _schema_source(table: str | None) -> bool:
    name = (table or "").lower()
    return name in _SCHEMA_TABLES or name.startswith(_READ_ONLY_SOURCES)


def _no_pragma_or_transaction(_: Sandbox) -> Callable[..., int]:
    """The schema mirror's and the compile check's connections: the base rules, and no PRAGMA or transaction."""

    def authorize(action: int, arg1: Any, arg2: Any, database: Any, _trigger: Any) -> int:
        if not _base(action, arg1, arg2, database) or action in (
            sqlite3.SQLITE_PRAGMA, sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT,
        ):
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    return authorize


_POLICIES: dict[str, Callable[[Sandbox], Callable[..., int]]] = {
    ENGINE: _engine, READ: _read, SCHEMA: _no_pragma_or_transaction, CHECK: _no_pragma_or_transaction,
}
