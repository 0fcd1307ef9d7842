"""Rows from DuckDB as D1 returns them: the first few as tuples, the rest of a large result columnar (numpy), far
cheaper than Python tuples; values of mixed type (written by udfs.py' __sq_out) decoded back as SQLite's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_sim.local.d1.core import Outcome
from memory_sim.local.d1.dialect.udfs import OUT_TYPE, decode

# Result types whose Python values need no reshaping for D1 (and convert exactly through numpy).
_PLAIN_TYPES = frozenset({"VARCHAR", "BIGINT", "INTEGER", "DOUBLE"})
_HEAD_ROWS = 64  # rows fetched as tuples before a large result switches to columnar fetching


def read(cursor: Any, last_rowid: int) -> Outcome:
    """Rows as tuples; past the first few, columns of plain types come columnar (numpy), which is far
    cheaper for large reads than Python tuples."""
    description = cursor.description or ()
    columns = [d[0] for d in description]
    plain = len(set(columns)) == len(columns) and all(str(d[1]) in _PLAIN_TYPES for d in description)
    rows = cursor.fetchmany(_HEAD_ROWS)
    if len(rows) < _HEAD_ROWS:
        return Outcome(columns, decoded(description, rows), 0, last_rowid, False, plain)
    if not plain:
        return Outcome(columns, decoded(description, rows + cursor.fetchall()), 0, last_rowid, False)
    arrays = cursor.fetchnumpy()
    tail = [arrays[name].tolist() for name in columns]
    return Outcome(columns, rows, 0, last_rowid, False, plain, tail)


def decoded(description: Sequence[Any], rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Rows with the values of mixed type (udfs.__sq_out) back as SQLite's."""
    wrapped = [n for n, d in enumerate(description) if str(d[1]) == OUT_TYPE]
    if not wrapped or not rows:
        return rows
    out = []
    for row in rows:
        values = list(row)
        for n in wrapped:
            values[n] = decode(values[n])
        out.append(tuple(values))
    return out


def target_name(sql: str) -> str | None:
    """The table an INSERT/UPDATE/DELETE written by the dialect layer writes (its third or second word)."""
    words = sql.replace("(", " ").split()
    upper = [w.upper() for w in words]
    for marker in ("INTO", "UPDATE", "FROM"):
        if marker in upper[:4]:
            name = words[upper.index(marker) + 1]
            return name[1:-1].replace('""', '"') if name.startswith('"') else name
    return None
