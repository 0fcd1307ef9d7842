"""A D1 database as SQL text (`wrangler d1 export`), which `wrangler d1 execute --file` runs back into an identical
database: the same `sqlite_master` text, the same rows and value types, the same AUTOINCREMENT counters.

Order, as SQLite's `.dump`: tables, their rows (`INSERT INTO "t" ("a","b") VALUES(...)`, in the table's own order),
the AUTOINCREMENT counters (`sqlite_sequence`, where the engine has it), then indexes, views and triggers (last,
so that no trigger fires while the rows go in). Only the database's public statement API is used, so both
engines dump through the same front door. D1's own export opens with `PRAGMA defer_foreign_keys=TRUE`; this one
does not (the DuckDB engine takes no PRAGMA assignment): tables go in creation order, parents first.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from memory_sim.bindings.d1_sql import sql_literal
from memory_sim.errors import D1Error

_SCHEMA = ("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL"
           r" AND name NOT LIKE 'sqlite\_%' ESCAPE '\' AND name NOT LIKE '\_cf\_%' ESCAPE '\'")
_LATER = ("index", "view", "trigger")


def quote_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def dump(database: Any, tables: Sequence[str] = (), *, schema: bool = True, data: bool = True) -> str:
    """The SQL text of `database` (a D1 database), limited to `tables` when given."""
    return "".join(line + "\n" for line in dump_lines(database, tables, schema=schema, data=data))


def dump_lines(database: Any, tables: Sequence[str] = (), *, schema: bool = True, data: bool = True
               ) -> Iterator[str]:
    items = database.prepare(_SCHEMA).raw()
    wanted = set(tables)
    chosen = [item for item in items if not wanted or item[2] in wanted]
    if wanted - {item[1] for item in items if item[0] == "table"}:
        missing = ", ".join(sorted(wanted - {item[1] for item in items}))
        raise D1Error(f"no such table: {missing}")
    user_tables = [str(name) for kind, name, _, _ in chosen if kind == "table"]
    if schema:
        yield from (_statement(sql) for kind, _, _, sql in chosen if kind == "table")
    if data:
        for table in user_tables:
            yield from _rows(database, table)
        yield from _sequences(database, user_tables)
    if schema:
        yield from (_statement(sql) for kind, _, _, sql in chosen if kind in _LATER)


def _statement(sql: str) -> str:
    return sql if sql.rstrip().endswith(";") else sql + ";"


def _rows(database: Any, table: str) -> Iterator[str]:
    rows = database.prepare(f"SELECT * FROM {quote_name(table)}").raw(column_names=True)
    if len(rows) <= 1:
        return
    head = f"INSERT INTO {quote_name(table)} ({','.join(quote_name(c) for c in rows[0])}) VALUES("
    for row in rows[1:]:
        yield head + ",".join(sql_literal(value) for value in row) + ");"


def _sequences(database: Any, tables: list[str]) -> Iterator[str]:
    """AUTOINCREMENT counters, so that the next id is the same after a re-import (the sqlite engine's)."""
    try:
        counters = database.prepare("SELECT name, seq FROM sqlite_sequence").raw()
    except D1Error:  # no AUTOINCREMENT table yet, or an engine that keeps the counters itself
        return
    for name, seq in counters:
        if name in tables:
            yield f"DELETE FROM sqlite_sequence WHERE name = {sql_literal(name)};"
            yield f"INSERT INTO sqlite_sequence (name, seq) VALUES({sql_literal(name)},{sql_literal(seq)});"
