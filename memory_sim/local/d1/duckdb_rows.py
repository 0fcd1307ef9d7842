"""Rows from DuckDB as D1 returns them: the first few as tuples, the rest of a large result columnar (numpy), far
cheaper than Python tuples; values of mixed type (written by udfs.py' __sq_out) decoded back as SQLite's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_sim.errors import D1Error
from memory_sim.local.d1.core import Outcome
from memory_sim.local.d1.dialect.udfs import OUT_TYPE, decode, too_big

# Result types whose Python values need no reshaping for D1 (and convert exactly through numpy).
_PLAIN_TYPES = frozenset({"VARCHAR", "BIGINT", "INTEGER", "DOUBLE"})
_SIZED_TYPES = frozenset({"VARCHAR", "BLOB", OUT_TYPE})  # result columns that may hold a long text or blob
_HEAD_ROWS = 64  # rows fetched as tuples before a large result switches to columnar fetching


def read(cursor: Any, last_rowid: int) -> Outcome:
    """Rows as tuples; past the first few, columns of plain types come columnar (numpy), which is far
    cheaper for large reads than Python tuples."""
    description = cursor.description or ()
    columns = [d[0] for d in description]
    plain = len(set(columns)) == len(columns) and all(str(d[1]) in _PLAIN_TYPES for d in description)
    sized = [n for n, d in enumerate(description) if str(d[1]) in _SIZED_TYPES]
    rows = cursor.fetchmany(_HEAD_ROWS)
    if len(rows) < _HEAD_ROWS:
        return Outcome(columns, _fitting(decoded(description, rows), sized), 0, last_rowid, False, plain)
    if not plain:
        return Outcome(columns, _fitting(decoded(description, rows + cursor.fetchall()), sized), 0, last_rowid,
                       False)
    arrays = cursor.fetchnumpy()
    tail = [arrays[name].tolist() for name in columns]
    _fitting(rows, sized)
    for n in sized:
        _fitting([(v,) for v in tail[n]], [0])
    return Outcome(columns, rows, 0, last_rowid, False, plain, tail)


def _fitting(rows: list[tuple[Any, ...]], sized: list[int]) -> list[tuple[Any, ...]]:
    """The rows, unless a text or blob in them is over D1's 2,000,000 bytes (computed by the query: SQLite
    refuses to make one, DuckDB makes it): then SQLite's error."""
    for row in rows if sized else ():
        for n in sized:
            value = row[n]
            if isinstance(value, (str, bytes)) and too_big(value):
                raise D1Error("string or blob too big: SQLITE_TOOBIG")
    return rows


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
