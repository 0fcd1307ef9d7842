"""INSERT OR REPLACE / REPLACE INTO with SQLite's meaning on DuckDB.

SQLite's REPLACE deletes every existing row that conflicts with a new row on ANY uniqueness constraint
(PRIMARY KEY, UNIQUE, unique index), then inserts the new row whole: columns the statement does not list get
their defaults. DuckDB's INSERT OR REPLACE updates the conflicting row in place instead (unlisted columns keep
their old values). So the statement becomes a small plan the engine runs in one transaction:
stage the new rows (numbered, ids given) -> count them -> delete conflicting table rows -> drop staged rows a
later staged row replaces (SQLite inserts row by row) -> insert the survivors -> drop the stage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect.expressions import Emitter, Translation
from memory_sim.local.d1.dialect.schema import TableInfo

if TYPE_CHECKING:
    from memory_sim.local.d1.dialect.insert import Insert

STAGE = "__sq_in"


def replace_plan(em: Emitter, ins: Insert, source: str, tail: str) -> Translation:
    """`source` holds the new rows, each value already stored as its column keeps it (insert.py); `tail` is
    the statement's RETURNING clause, if any."""
    table = ins.table
    columns = list(ins.columns)
    final, picks = _staged_columns(em, columns, table)
    keys = _keys(table, final)
    name = ins.name_sql
    listed = ", ".join(_q(c) for c in columns)
    steps = [
        f"CREATE OR REPLACE TEMP TABLE {STAGE} AS SELECT __n, {', '.join(picks)} FROM "
        f"(SELECT row_number() OVER () AS __n, * FROM ({source}) AS __v({listed})) AS __s",
        f"SELECT count(*) FROM {STAGE}",
    ]
    if keys:
        steps.append(
            f"DELETE FROM {name} WHERE EXISTS (SELECT 1 FROM {STAGE} AS __i WHERE {_match(keys, '__i', name)})"
        )
        steps.append(
            f"DELETE FROM {STAGE} AS __a WHERE EXISTS (SELECT 1 FROM {STAGE} AS __b "
            f"WHERE __b.__n > __a.__n AND ({_match(keys, '__b', '__a')}))"
        )
    cols = ", ".join(_q(c) for c in final)
    sql = f"INSERT INTO {name} ({cols}) SELECT {cols} FROM {STAGE} ORDER BY __n {tail}".rstrip()
    rowid = table.rowid_column
    injected = rowid is not None and not ins.returning
    if injected:
        sql += f" RETURNING {_q(rowid or '')}"
    return Translation(
        sql,
        "replace",
        returns_rows=ins.returning or injected,
        extras=tuple(em.extras),
        target=table if rowid else None,
        returning_injected=injected,
        steps=tuple(steps),
    )


def _staged_columns(em: Emitter, columns: list[str], table: TableInfo) -> tuple[list[str], list[str]]:
    """The inserted columns and how each is staged; rowid rows without an id get SQLite's max+1 upward."""
    rowid = table.rowid_column
    if rowid is None:
        return columns, [_q(c) for c in columns]
    base = em.extra("id_base")
    picks = [f"coalesce({_q(c)}, {base} + __n) AS {_q(c)}" if c.lower() == rowid.lower() else _q(c) for c in columns]
    if rowid.lower() in (c.lower() for c in columns):
        return columns, picks
    return [rowid, *columns], [f"{base} + __n AS {_q(rowid)}", *picks]


def _keys(table: TableInfo, final: list[str]) -> list[tuple[str, ...]]:
    present = {c.lower() for c in final}
    keys = []
    for key in table.unique_keys:
        missing = [c for c in key if c.lower() not in present]
        if not missing:
            keys.append(key)
        elif any(c in table.defaults for c in missing):
            raise D1Unsupported(
                f"INSERT OR REPLACE that leaves unique column '{missing[0]}' to its DEFAULT on the DuckDB engine; "
                "list the column"
            )
        # else the missing column is NULL in every new row, and NULLs never conflict
    return keys


def _match(keys: list[tuple[str, ...]], left: str, right: str) -> str:
    return " OR ".join("(" + " AND ".join(f"{left}.{_q(c)} = {right}.{_q(c)}" for c in key) + ")" for key in keys)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
