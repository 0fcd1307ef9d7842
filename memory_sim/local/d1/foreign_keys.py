"""Foreign keys on the DuckDB engine, enforced as D1 enforces them: always on (`PRAGMA foreign_keys = ON`, which a
query cannot turn off: D1 runs each one inside a transaction), checked when each statement ends, or when the
transaction commits after `PRAGMA defer_foreign_keys = ON` (D1's way to violate them for a while, e.g. in a
migration). The DuckDB tables carry no REFERENCES of their own: DuckDB checks each row at once and would refuse what
SQLite allows within a statement, such as INSERT OR REPLACE of a parent row (deleted and re-inserted).

The keys come from the schema mirror (`PRAGMA foreign_key_list`); a check looks for a child row whose key columns
are all non-NULL and match no parent row (MATCH SIMPLE, as SQLite). SQLite's own errors about a malformed key
("foreign key mismatch") come from the mirror compiling the statement first.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from memory_sim.errors import D1Error
from memory_sim.local.d1.dialect.schema import quote_name

FAILED = "FOREIGN KEY constraint failed: SQLITE_CONSTRAINT"


@dataclass(frozen=True, slots=True)
class ForeignKey:
    child: str
    columns: tuple[str, ...]
    parent: str
    parent_columns: tuple[str, ...]

    def violation(self) -> str:
        """A query returning a row when some child row references no parent row."""
        present = " AND ".join(f"__c.{quote_name(c)} IS NOT NULL" for c in self.columns)
        match = " AND ".join(
            f"__p.{quote_name(p)} = __c.{quote_name(c)}"
            for c, p in zip(self.columns, self.parent_columns, strict=False)
        )
        return (
            f"SELECT 1 FROM {quote_name(self.child)} AS __c WHERE {present} AND NOT EXISTS "
            f"(SELECT 1 FROM {quote_name(self.parent)} AS __p WHERE {match}) LIMIT 1"
        )


def foreign_keys(mirror: sqlite3.Connection) -> list[ForeignKey]:
    keys: list[ForeignKey] = []
    tables = [r[0] for r in mirror.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()]
    for child in tables:
        rows = mirror.execute(f"PRAGMA foreign_key_list({quote_name(child)})").fetchall()
        by_id: dict[int, list[Any]] = {}
        for row in rows:  # id, seq, table, from, to, on_update, on_delete, match
            by_id.setdefault(row[0], []).append(row)
        for group in by_id.values():
            group.sort(key=lambda r: r[1])
            parent = str(group[0][2])
            targets = [r[4] for r in group]
            if any(t is None for t in targets):
                targets = _primary_key(mirror, parent)
            if len(targets) == len(group):
                keys.append(ForeignKey(child, tuple(str(r[3]) for r in group), parent, tuple(map(str, targets))))
    return keys


def _primary_key(mirror: sqlite3.Connection, table: str) -> list[str]:
    info = mirror.execute(f"PRAGMA table_info({quote_name(table)})").fetchall()
    return [r[1] for r in sorted((r for r in info if r[5] > 0), key=lambda r: r[5])]


class Enforcer:
    """Which keys a write can break, and whether to check them now or at commit."""

    def __init__(self) -> None:
        self.keys: list[ForeignKey] = []
        self.deferred = False  # PRAGMA defer_foreign_keys = ON, until the transaction ends
        self.pending: set[str] = set()  # tables written while deferred

    def reload(self, mirror: sqlite3.Connection) -> None:
        self.keys = foreign_keys(mirror)

    def involved(self, table: str | None) -> list[ForeignKey]:
        if table is None or not self.keys:
            return []
        lower = table.lower()
        return [k for k in self.keys if lower in (k.child.lower(), k.parent.lower())]

    def check(self, conn: Any, keys: list[ForeignKey], tables: set[str]) -> None:
        existing = {r[0].lower() for r in conn.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND NOT internal"
        ).fetchall()}
        for key in keys:
            if key.child.lower() not in existing:
                continue
            if key.parent.lower() not in existing:
                if conn.execute(_any_reference(key)).fetchone() is not None:
                    raise D1Error(FAILED)
                continue
            if conn.execute(key.violation()).fetchone() is not None:
                raise D1Error(FAILED)

    def at_commit(self, conn: Any) -> None:
        """The deferred checks, when the transaction commits; then deferral ends, as in SQLite."""
        try:
            if self.pending:
                keys = [k for k in self.keys if {k.child.lower(), k.parent.lower()} & self.pending]
                self.check(conn, keys, self.pending)
        finally:
            self.end()

    def end(self) -> None:
        self.deferred = False
        self.pending.clear()


def _any_reference(key: ForeignKey) -> str:
    present = " AND ".join(f"{quote_name(c)} IS NOT NULL" for c in key.columns)
    return f"SELECT 1 FROM {quote_name(key.child)} WHERE {present} LIMIT 1"
