"""The DuckDB engine's connection: DuckDB's own, creating the SQLite dialect's macros the first time a statement
names them. A database uses a few of the 28 (the sqllogictest sample: 4), and creating all of them cost about
20 ms of each open. Temporary macros live in the transaction that created them: those created inside one that
then rolls back are created again when next named."""

from __future__ import annotations

from typing import Any

from memory_sim.local.d1.dialect.functions import MACRO_TEXTS, macros_named

# What the engine's stored objects may call: views, tables (DEFAULT, CHECK) and indexes, read when it opens.
_STORED_SQL = (
    "SELECT sql FROM duckdb_views() WHERE NOT internal AND NOT temporary AND database_name = current_database() "
    "UNION ALL SELECT sql FROM duckdb_tables() WHERE database_name = current_database() "
    "UNION ALL SELECT sql FROM duckdb_indexes() WHERE database_name = current_database()"
)


class MacroConnection:
    """`execute` as DuckDB's, the macros it names created first; everything else is DuckDB's connection's."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._made: set[str] = set()
        self._in_transaction: set[str] | None = None  # made since BEGIN TRANSACTION: undone by a rollback

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def make_stored_needs(self) -> None:
        """The macros the database's views, tables and indexes call (a view is bound when a query reads it)."""
        for (sql,) in self._conn.execute(_STORED_SQL).fetchall():
            self._make(macros_named(sql or ""))

    def execute(self, sql: str, params: Any = None) -> Any:
        names = macros_named(sql)
        if names and not self._made.issuperset(names):
            self._make(names)
        if sql in ("BEGIN TRANSACTION", "COMMIT", "ROLLBACK"):
            return self._transaction(sql)
        return self._conn.execute(sql) if params is None else self._conn.execute(sql, params)

    def _make(self, names: tuple[str, ...]) -> None:
        for name in names:
            if name not in self._made:
                self._conn.execute(MACRO_TEXTS[name])
                self._made.add(name)
                if self._in_transaction is not None:
                    self._in_transaction.add(name)

    def _transaction(self, sql: str) -> Any:
        if sql == "ROLLBACK":
            try:
                return self._conn.execute(sql)
            finally:  # rolled back, or no transaction left to roll back (DuckDB ended a failed COMMIT's)
                self._made -= self._in_transaction or set()
                self._in_transaction = None
        result = self._conn.execute(sql)  # a failed COMMIT leaves the set for the ROLLBACK that follows
        self._in_transaction = set() if sql == "BEGIN TRANSACTION" else None
        return result
