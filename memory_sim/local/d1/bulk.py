"""Runs of identical INSERTs in a batch or an import, executed as one DuckDB statement.

DuckDB pays about a millisecond per statement, so `batch([insert.bind(...) for ...])` of 10,000 rows, or a
`wrangler d1 export` dump of 100,000 INSERTs, would take minutes. When consecutive statements share one plain
`INSERT INTO t [(cols)] VALUES (...)[, (...)]` whose values are bare parameters or literals, the run is inserted
from column lists (`unnest`) in one statement. Every form a dump or a hand-written file holds qualifies: with or
without a column list (then every column, in order), names quoted or not, the INTEGER PRIMARY KEY listed or not,
several rows per statement (bare `?` only: sql_stream.with_parameters writes them so; a statement of more literal
rows than D1 binds is read by literal_rows.py and runs as its one-row `?` form). The meaning is the same as
one INSERT per statement:

- each value is stored as its column keeps it (store.py; a run whose values a column would keep differently, such
  as text in an INTEGER column, runs statement by statement, where the rules apply value by value);
- INTEGER PRIMARY KEY ids are given or max+1 upward for NULL (`assign_ids`, supplied explicitly);
- the first statement that would fail is found before anything runs (`first_failing_row`: a repeated or existing
  key, a NULL in a NOT NULL column), and the run fails as that statement would, with SQLite's words and its own
  index (`FailingRow`; a failure rolls the whole batch or import back anyway).

Anything else (subqueries, functions, upserts, OR clauses, RETURNING, self-referencing tables, CHECK constraints,
foreign keys checked at once) runs statement by statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memory_sim.bindings.d1_sql import Token, placeholders
from memory_sim.errors import D1Error
from memory_sim.local.d1.dialect.expressions import match_paren, new_emitter, split_args, strip_end
from memory_sim.local.d1.dialect.schema import ColumnInfo, Schema, TableInfo, quote_name
from memory_sim.local.d1.dialect.store import NOT_LITERAL, number_or_value, stored_literal

_LITERAL_KINDS = ("param", "number", "string", "blob")


@dataclass(frozen=True, slots=True)
class BulkInsert:
    sql: str  # binds one list per column slot, then (for rowid tables) the list of ids
    params: int  # column slots: the parameters of one row
    target: TableInfo | None  # the rowid table whose ids the engine supplies
    columns: tuple[tuple[ColumnInfo, ...], ...] = ()  # per slot, the columns it is written to
    rows_per_statement: int = 1  # `VALUES (?, ?), (?, ?)`: 2 rows, each statement's values row after row
    explicit_ids: int | None = None  # the slot (1-based) that lists the INTEGER PRIMARY KEY, NULL asking for one
    names: tuple[str, ...] = ()  # per slot, the column it is written to (for the engine's checks)
    table: TableInfo | None = None  # the table written to

    @property
    def table_name(self) -> str:
        assert self.table is not None
        return self.table.name


@lru_cache(maxsize=512)
def bulk_insert(sql: str, schema: Schema) -> BulkInsert | None:
    """The one-statement form of a run of `sql`, or None when it must run statement by statement."""
    toks = strip_end(sql)
    sig = [i for i, t in enumerate(toks) if not t.trivia]
    if len(sig) < 5 or not toks[sig[0]].is_word("INSERT") or not toks[sig[1]].is_word("INTO"):
        return None
    table = schema.table(toks[sig[2]].name)
    if table is None or table.self_referencing or len(table.info) != len(table.columns):
        return None
    if toks[sig[3]].text == "(" and toks[sig[3]].kind == "op":
        cols_close = match_paren(toks, sig[3])
        columns = [toks[lo:hi] for lo, hi in split_args(toks, sig[3], cols_close)]
        names = [next(t for t in col if not t.trivia).name for col in columns]
    else:  # no column list: every column of the table, in order
        cols_close, names = sig[2], list(table.columns)
    after = [i for i in sig if i > cols_close]
    if len(after) < 2 or not toks[after[0]].is_word("VALUES") or toks[after[1]].text != "(":
        return None
    rows = _value_rows(toks, after)
    if rows is None or any(len(row) != len(names) for row in rows):
        return None
    if len(rows) > 1 and any(item[0].kind != "param" or item[0].text != "?" for row in rows for item in row):
        return None  # several rows: bare `?` only, so that row r's values are the statement's r-th slice
    marks = placeholders(sql)
    if marks.count == 0 or len({n.lower() for n in names}) != len(names):
        return None
    infos = [table.column_info(name) for name in names]
    if any(info is None for info in infos):
        return None
    return _build(toks[sig[2]], sql, table, names, [info for info in infos if info is not None], rows, marks.numbers)


def _value_rows(toks: list[Token], after: list[int]) -> list[list[list[Token]]] | None:
    """The items of each row of `VALUES (...), (...)` (significant tokens), or None when anything follows the rows
    (ON CONFLICT, RETURNING) or an item is not one token."""
    rows, at = [], 1
    while True:
        close = match_paren(toks, after[at])
        items = [[t for t in toks[lo:hi] if not t.trivia] for lo, hi in split_args(toks, after[at], close)]
        if any(len(item) != 1 for item in items):
            return None
        rows.append(items)
        rest = [i for i in after if i > close]
        if not rest:
            return rows
        if len(rest) < 2 or toks[rest[0]].text != "," or toks[rest[1]].text != "(":
            return None
        at = after.index(rest[1])


def _build(name_tok: Token, sql: str, table: TableInfo, names: list[str], infos: list[ColumnInfo],
           rows: list[list[list[Token]]], numbers: tuple[int, ...]) -> BulkInsert | None:
    per_row = len(names)
    multi = len(rows) > 1
    seen = iter(numbers)
    rowid = table.rowid_column
    exprs: list[str] = []
    written: dict[int, list[ColumnInfo]] = {}
    slot_names: dict[int, str] = {}
    literal_nulls: set[str] = set()
    explicit: int | None = None
    for position, (item, name, info) in enumerate(zip(rows[0], names, infos, strict=True)):
        is_rowid = rowid is not None and name.lower() == rowid.lower()
        if item[0].kind == "param":
            number = position + 1 if multi else next(seen)
            written.setdefault(number, []).append(info)
            slot_names[number] = name
            if is_rowid:
                if explicit is not None or sum(1 for n in numbers[:per_row] if n == number) != 1:
                    return None
                explicit = number
                exprs.append("__id")
            else:
                exprs.append(f"CAST(__p{number} AS {info.duck})")
        else:
            if is_rowid:
                return None  # the same id in every statement of the run: the second fails (one by one says so)
            value = number_or_value(item[0])
            if value is NOT_LITERAL:
                return None
            if value is None:
                literal_nulls.add(name.lower())
            try:
                exprs.append(stored_literal(value, info, f"{table.name}.{name}"))
            except D1Error:
                return None  # refused: statement by statement says so
    params = per_row if multi else max(numbers)
    fed = {slot_names[n].lower() for n in slot_names} | ({rowid.lower()} if rowid is not None else set())
    if not _checkable(table, names, fed, literal_nulls):
        return None
    em = new_emitter(sql)
    sources = [f"unnest(${n}) AS __p{n}" for n in range(1, params + 1)]
    if rowid is not None:
        if explicit is None:
            names, exprs = [rowid, *names], ["__id", *exprs]
        sources.append(f"unnest(${params + 1}) AS __id")
    quoted = ", ".join('"' + n.replace('"', '""') + '"' for n in names)
    text = (
        f"INSERT INTO {em.verbatim(name_tok, '')} ({quoted}) "
        f"SELECT {', '.join(exprs)} FROM (SELECT {', '.join(sources)}) AS __rows"
    )
    per_param = tuple(tuple(written.get(n, ())) for n in range(1, params + 1))
    return BulkInsert(text, params, table if rowid is not None else None, per_param, len(rows), explicit,
                      tuple(slot_names.get(n, "") for n in range(1, params + 1)), table)


def _checkable(table: TableInfo, names: list[str], fed: set[str], literal_nulls: set[str]) -> bool:
    """Whether `first_failing_row` can find every row that would fail a NOT NULL or UNIQUE constraint: a NOT NULL
    column is fed by a parameter, a literal that is not NULL, or its default; a unique key's columns by parameters
    (or the rowid), compared as Python compares them (no collation)."""
    given = {n.lower() for n in names}
    rowid = (table.rowid_column or "").lower()
    defaults = {c.lower() for c in table.defaults}
    for column in table.not_null:
        lower = column.lower()
        if lower != rowid and (lower in literal_nulls or (lower not in given and lower not in defaults)):
            return False  # fails on every row: one by one says so
    by_name = {c.lower(): i for c, i in zip(table.columns, table.info, strict=False)}
    for key in table.unique_keys:
        if any(c.lower() not in fed or by_name.get(c.lower(), ColumnInfo("", "?")).coll for c in key):
            return False
    return True


class FailingRow(D1Error):
    """A statement of a run would fail: SQLite's words, and which statement of the run (counted from 0)."""

    def __init__(self, message: str, statement: int) -> None:
        super().__init__(message)
        self.statement = statement


def first_failing_row(conn: Any, bulk: BulkInsert, lists: list[list[Any]], limit: int, *,
                      empty: bool = False, top: int | None = None) -> tuple[int, str] | None:
    """The first row that would fail NOT NULL or a unique key (a repeat within the run, or a row already in the
    table) with SQLite's message, or None. Rows from `limit` on are known to fail the INTEGER PRIMARY KEY (a
    repeated id). `lists` ends with the ids of a rowid table. `empty`: the table is known to hold no row; `top`:
    its largest rowid (no id above it can exist)."""
    table = bulk.table
    assert table is not None
    rowid = (table.rowid_column or "").lower()
    slots = {name.lower(): i for i, name in enumerate(bulk.names) if name}
    count = len(lists[0]) if lists else 0
    found = [(limit, _unique(table, (table.rowid_column or "",)))] if limit < count else []

    def values(column: str) -> list[Any]:
        return lists[-1][:limit] if column.lower() == rowid else lists[slots[column.lower()]][:limit]

    for column in table.not_null:
        if column.lower() != rowid and column.lower() in slots:
            null = next((i for i, v in enumerate(values(column)) if v is None), None)
            if null is not None:
                found.append((null, f"NOT NULL constraint failed: {table.name}.{column}: SQLITE_CONSTRAINT"))
    for key in table.unique_keys:
        columns = [values(c) for c in key]
        repeat = first_repeat(list(zip(*columns, strict=True)))
        above = top is not None and key == (table.rowid_column,) and min(columns[0], default=top + 1) > top
        existing = None if empty or above else _first_existing(conn, table, key, columns)
        found += [(row, _unique(table, key)) for row in (repeat, existing) if row is not None]
    return min(found, default=None)


def _unique(table: TableInfo, key: tuple[str, ...]) -> str:
    return f"UNIQUE constraint failed: {', '.join(f'{table.name}.{c}' for c in key)}: SQLITE_CONSTRAINT"


def _first_existing(conn: Any, table: TableInfo, key: tuple[str, ...], columns: list[list[Any]]) -> int | None:
    """The first row whose key a row of the table already has (one query), or None."""
    if not columns or not columns[0]:
        return None
    quoted = [quote_name(c) for c in key]
    sources = ", ".join(f"unnest(${i + 1}) AS __k{i}" for i in range(len(key)))
    match = " AND ".join(f"__t.{q} = __r.__k{i}" for i, q in enumerate(quoted))
    row = conn.execute(
        f"SELECT min(__n) FROM (SELECT {sources}, unnest(range(${len(key) + 1})) AS __n) AS __r "
        f"WHERE EXISTS (SELECT 1 FROM {quote_name(table.name)} AS __t WHERE {match})",
        [*columns, len(columns[0])],
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def column_lists(rows: Sequence[Sequence[Any]], bulk: BulkInsert) -> list[list[Any]] | None:
    """The bound values as one list per column slot (a statement of several rows gives a row per slice), or None
    when a list would mix Python types (DuckDB would give it one common type) or hold values a column keeps with
    another type than DuckDB's cast gives. Integers among REALs for REAL columns only are made floats, as SQLite
    stores them."""
    width = bulk.params
    if bulk.rows_per_statement > 1:
        if any(len(row) != width * bulk.rows_per_statement for row in rows):
            return None
        rows = [row[at:at + width] for row in rows for at in range(0, len(row), width)]
    lists = [list(col) for col in zip(*rows, strict=True)] if rows else []
    if len(lists) != width:
        return None
    for slot, (values, columns) in enumerate(zip(lists, bulk.columns, strict=False)):
        kinds = {type(v) for v in values if v is not None}
        if kinds == {int, float} and columns and all(i.duck == "DOUBLE" and i.aff == "REAL" for i in columns):
            lists[slot] = values = [None if v is None else float(v) for v in values]
            kinds = {float}
        if len(kinds) > 1 or any(not _casts_exactly(kind, info) for kind in kinds for info in columns):
            return None
        if slot + 1 == bulk.explicit_ids and (kinds - {int} or any(abs(v) >= 2**63 - 1 for v in values if v)):
            return None  # text or REAL ids, or the largest rowid: SQLite converts or picks one; one by one does
    return lists


def assign_ids(top: int | None, explicit: Sequence[int | None] | None, count: int) -> tuple[list[int], int | None]:
    """The rowid of each of `count` rows as SQLite gives them: an explicit id as it is, NULL (or no id) one more
    than the largest so far (1 in an empty table); `top` is the table's largest before the run (None: empty; for
    AUTOINCREMENT the largest ever given). Also the first row whose explicit id an earlier row of the run took."""
    ids: list[int] = []
    taken: set[int] = set()
    for row in range(count):
        given = explicit[row] if explicit is not None else None
        if given is None:
            given = 1 if top is None else top + 1
        elif given in taken:
            return ids, row
        taken.add(given)
        ids.append(given)
        top = given if top is None else max(top, given)
    return ids, None


def first_repeat(keys: Sequence[tuple[Any, ...]]) -> int | None:
    """The first row whose key (no NULL in it: NULLs never clash in SQLite) an earlier row has, or None."""
    seen: set[tuple[Any, ...]] = set()
    for row, key in enumerate(keys):
        if any(v is None for v in key):
            continue
        if key in seen:
            return row
        seen.add(key)
    return None


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
