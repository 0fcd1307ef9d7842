"""Runs of identical single-row INSERTs in a batch, executed as one DuckDB statement.

DuckDB pays about a millisecond per statement, so `batch([insert.bind(...) for ...])` of 10,000 rows would take
seconds. When consecutive statements share one plain `INSERT INTO t (cols) VALUES (?, ...)` whose values are
bare parameters or literals, the run is inserted from column lists (`unnest`) in one statement. The meaning is
the same as one INSERT per statement: each value is stored as its column keeps it (store.py; a run whose
values a column would keep differently, such as text in an INTEGER column, runs statement by statement, where the
rules apply value by value), INTEGER PRIMARY KEY ids are max+1 upward (given here explicitly), and a failure fails
the whole batch anyway. Anything else (subqueries, functions, upserts, OR clauses, RETURNING, listed rowid
columns, self-referencing tables) runs statement by statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memory_sim.bindings.d1_sql import placeholders
from memory_sim.errors import D1Error
from memory_sim.local.d1.dialect.expressions import match_paren, new_emitter, split_args, strip_end
from memory_sim.local.d1.dialect.schema import ColumnInfo, Schema, TableInfo
from memory_sim.local.d1.dialect.store import NOT_LITERAL, number_or_value, stored_literal

_LITERAL_KINDS = ("param", "number", "string", "blob")


@dataclass(frozen=True, slots=True)
class BulkInsert:
    sql: str  # binds one list per user parameter, then (for rowid tables) the list of ids
    params: int
    target: TableInfo | None  # the rowid table whose ids the engine supplies
    columns: tuple[tuple[ColumnInfo, ...], ...] = ()  # per user parameter, the columns it is written to


@lru_cache(maxsize=512)
def bulk_insert(sql: str, schema: Schema) -> BulkInsert | None:
    """The one-statement form of a run of `sql`, or None when it must run statement by statement."""
    toks = strip_end(sql)
    sig = [i for i, t in enumerate(toks) if not t.trivia]
    if len(sig) < 6 or not toks[sig[0]].is_word("INSERT") or not toks[sig[1]].is_word("INTO"):
        return None
    table = schema.table(toks[sig[2]].name)
    if table is None or table.self_referencing or toks[sig[3]].text != "(":
        return None
    cols_close = match_paren(toks, sig[3])
    columns = [toks[lo:hi] for lo, hi in split_args(toks, sig[3], cols_close)]
    names = [next(t for t in col if not t.trivia).name for col in columns]
    after = [i for i in sig if i > cols_close]
    if len(after) < 2 or not toks[after[0]].is_word("VALUES") or toks[after[1]].text != "(":
        return None
    row_close = match_paren(toks, after[1])
    if row_close != sig[-1]:
        return None  # several rows, ON CONFLICT, RETURNING: statement by statement
    items = [[t for t in toks[lo:hi] if not t.trivia] for lo, hi in split_args(toks, after[1], row_close)]
    if len(items) != len(names) or any(len(item) != 1 for item in items):
        return None
    if any(item[0].kind not in _LITERAL_KINDS and not item[0].is_word("NULL") for item in items):
        return None
    marks = placeholders(sql)
    rowid = table.rowid_column
    if marks.count == 0 or (rowid is not None and rowid.lower() in (n.lower() for n in names)):
        return None
    em = new_emitter(sql)
    seen = iter(marks.numbers)
    infos = [table.column_info(name) for name in names]
    if any(info is None for info in infos):
        return None
    exprs = []
    written: dict[int, list[ColumnInfo]] = {}
    for item, name, info in zip(items, names, infos, strict=False):
        assert info is not None
        if item[0].kind == "param":
            number = next(seen)
            written.setdefault(number, []).append(info)
            exprs.append(f"CAST(__p{number} AS {info.duck})")
        else:
            value = number_or_value(item[0])
            if value is NOT_LITERAL:
                return None
            try:
                exprs.append(stored_literal(value, info, f"{table.name}.{name}"))
            except D1Error:
                return None  # refused: statement by statement says so
    sources = [f"unnest(${n}) AS __p{n}" for n in range(1, marks.count + 1)]
    if rowid is not None:
        names, exprs = [rowid, *names], ["__id", *exprs]
        sources.append(f"unnest(${marks.count + 1}) AS __id")
    quoted = ", ".join('"' + n.replace('"', '""') + '"' for n in names)
    text = (
        f"INSERT INTO {em.verbatim(toks[sig[2]], '')} ({quoted}) "
        f"SELECT {', '.join(exprs)} FROM (SELECT {', '.join(sources)}) AS __rows"
    )
    per_param = tuple(tuple(written.get(n, ())) for n in range(1, marks.count + 1))
    return BulkInsert(text, marks.count, table if rowid is not None else None, per_param)


def column_lists(rows: Sequence[Sequence[Any]], bulk: BulkInsert) -> list[list[Any]] | None:
    """The bound values as one list per parameter, or None when a list would mix Python types (DuckDB would give
    it one common type) or hold values a column keeps with another type than DuckDB's cast gives."""
    lists = [list(col) for col in zip(*rows, strict=True)] if rows else []
    if len(lists) != bulk.params:
        return None
    for values, columns in zip(lists, bulk.columns, strict=False):
        kinds = {type(v) for v in values if v is not None}
        if len(kinds) > 1 or any(not _casts_exactly(kind, info) for kind in kinds for info in columns):
            return None
    return lists


def _casts_exactly(kind: type, info: ColumnInfo) -> bool:
    """DuckDB's cast of a Python value of this type into the column is what SQLite would store."""
    if info.duck == "BIGINT":
        return kind in (int, bool)
    if info.duck == "DOUBLE":
        return kind is float or (kind is int and info.aff == "REAL")
    if info.duck == "VARCHAR":
        return kind is str and info.aff == "TEXT"
    if info.duck == "BLOB":
        return kind is bytes
    return False
