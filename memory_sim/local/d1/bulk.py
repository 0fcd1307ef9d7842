"""Runs of identical single-row INSERTs in a batch, executed as one DuckDB statement.

DuckDB pays about a millisecond per statement, so `batch([insert.bind(...) for ...])` of 10,000 rows would take
seconds. When consecutive statements share one plain `INSERT INTO t (cols) VALUES (?, ...)` whose values are
bare parameters or literals, the run is inserted from column lists (`unnest`) in one statement. The meaning is
the same as one INSERT per statement: each value is cast to its column as before, INTEGER PRIMARY KEY ids are
max+1 upward (given here explicitly), and a failure fails the whole batch anyway. Anything else (subqueries,
functions, upserts, OR clauses, RETURNING, listed rowid columns, self-referencing tables) runs statement by
statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memory_sim.bindings.d1_sql import placeholders
from memory_sim.local.d1.dialect.expressions import Schema, TableInfo, match_paren, new_emitter, split_args, strip_end

_LITERAL_KINDS = ("param", "number", "string", "blob")


@dataclass(frozen=True, slots=True)
class BulkInsert:
    sql: str  # binds one list per user parameter, then (for rowid tables) the list of ids
    params: int
    target: TableInfo | None  # the rowid table whose ids the engine supplies


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
    exprs = [f"__p{next(seen)}" if item[0].kind == "param" else em.emit(item) for item in items]
    sources = [f"unnest(${n}) AS __p{n}" for n in range(1, marks.count + 1)]
    if rowid is not None:
        names, exprs = [rowid, *names], ["__id", *exprs]
        sources.append(f"unnest(${marks.count + 1}) AS __id")
    quoted = ", ".join('"' + n.replace('"', '""') + '"' for n in names)
    text = (
        f"INSERT INTO {em.emit(toks, sig[2], sig[2] + 1)} ({quoted}) "
        f"SELECT {', '.join(exprs)} FROM (SELECT {', '.join(sources)}) AS __rows"
    )
    return BulkInsert(text, marks.count, table if rowid is not None else None)


def column_lists(rows: Sequence[Sequence[Any]], width: int) -> list[list[Any]] | None:
    """The bound values as one list per parameter, or None when a list would mix Python types: DuckDB would
    give such a list one common type (text, or double for int+float), which single INSERTs do not do."""
    lists = [list(col) for col in zip(*rows, strict=True)] if rows else []
    if len(lists) != width:
        return None
    for values in lists:
        kinds = {type(v) for v in values if v is not None}
        if len(kinds) > 1:
            return None
    return lists
