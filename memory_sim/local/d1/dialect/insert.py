"""INSERT (and REPLACE) with SQLite's meaning on DuckDB: each value is written as the column's affinity keeps it
(store.py), rows without an INTEGER PRIMARY KEY id get SQLite's next rowid (max + 1 upward, counted from a base
the engine binds), and INSERT OR REPLACE becomes the plan of replace.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_sim.bindings.d1_sql import Token, tokenize
from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect.clauses import Walker
from memory_sim.local.d1.dialect.expressions import Emitter, Translation, match_paren, next_significant, split_args
from memory_sim.local.d1.dialect.names import name_result_columns
from memory_sim.local.d1.dialect.operands import DUCK_TYPES, Typed
from memory_sim.local.d1.dialect.replace import replace_plan
from memory_sim.local.d1.dialect.schema import ColumnInfo, Schema, TableInfo, quote_name
from memory_sim.local.d1.dialect.store import NOT_LITERAL, number_or_value, store, stored_literal, written
from memory_sim.local.d1.dialect.udfs import failure, refusal


@dataclass
class Insert:
    prefix: str  # INSERT, INSERT OR IGNORE, INSERT OR REPLACE
    table: TableInfo
    name_sql: str  # the table (and alias) as DuckDB reads it
    columns: list[str]  # the listed columns, or all of them
    kind: str  # values, select, default
    source: tuple[int, int]  # token range of the VALUES rows or the SELECT
    tail: tuple[int, int]  # ON CONFLICT ... and RETURNING ...
    returning: bool


def translate_insert(em: Emitter, toks: list[Token], schema: Schema) -> Translation:
    returning = any(t.is_word("RETURNING") for t in toks)
    if returning:
        toks = name_result_columns(toks, start_word="RETURNING")
    ins = _parse(em, toks, schema, returning)
    em.store_target = ins.table
    if ins.prefix == "INSERT OR REPLACE":
        source, _ = _source(em, toks, ins, schema, with_ids=False)
        return replace_plan(em, ins, _with_replace_defaults(ins, source), _tail(em, toks, ins))
    rowid = ins.table.rowid_column
    columns = list(ins.columns)
    if rowid is not None and rowid.lower() not in (c.lower() for c in columns):
        columns.insert(0, rowid)
    if ins.kind == "default":
        body = f"({quote_name(rowid)}) VALUES ({em.extra('id_base')} + 1)" if rowid else "DEFAULT VALUES"
    else:
        source, several = _source(em, toks, ins, schema, with_ids=rowid is not None)
        body = f"({', '.join(quote_name(c) for c in columns)}) {_as_sqlite_skips(toks, ins, columns, source, several)}"
    sql = f"{ins.prefix} INTO {ins.name_sql} {body} {_tail(em, toks, ins)}".rstrip()
    if rowid is None:
        return Translation(sql, "write", returns_rows=returning, extras=tuple(em.extras))
    if not returning:
        sql += f" RETURNING {quote_name(rowid)}"
    upsert = any(t.is_word("CONFLICT") for t in toks)
    return Translation(sql, "write", True, tuple(em.extras), ins.table, returning_injected=not returning,
                       upsert=upsert)


def _parse(em: Emitter, toks: list[Token], schema: Schema, returning: bool) -> Insert:
    sig = [i for i, t in enumerate(toks) if not t.trivia]
    prefix, k = "INSERT OR REPLACE", 1
    if toks[sig[0]].is_word("INSERT"):
        prefix = "INSERT"
        if toks[sig[1]].is_word("OR"):
            action = toks[sig[2]].upper
            if action in ("ROLLBACK", "FAIL"):
                raise D1Unsupported(f"INSERT OR {action} is not available on DuckDB; use INSERT in a batch()")
            prefix = "INSERT" if action == "ABORT" else f"INSERT OR {action}"
            k = 3
    if not toks[sig[k]].is_word("INTO"):
        raise D1Unsupported("INSERT without INTO")
    name_at = sig[k + 1]
    table = schema.table(toks[name_at].name)
    if table is None:
        raise D1Unsupported(f"INSERT into {toks[name_at].name}, which is not a table of this database")
    name_end = name_at + 1
    j = next_significant(toks, name_end)
    if j is not None and toks[j].is_word("AS"):
        if prefix == "INSERT OR REPLACE":
            raise D1Unsupported("INSERT OR REPLACE with a table alias on the DuckDB engine; drop the alias")
        alias = next_significant(toks, j + 1)
        name_end = (alias or j) + 1
        j = next_significant(toks, name_end)
    columns = list(table.columns)
    if j is not None and toks[j].text == "(":
        close = match_paren(toks, j)
        columns = [next(t for t in toks[lo:hi] if not t.trivia).name for lo, hi in split_args(toks, j, close)]
        j = next_significant(toks, close + 1)
    if j is None:
        raise D1Unsupported("INSERT without VALUES or SELECT")
    name_sql = "".join(em.verbatim(t, "") for t in toks[name_at:name_end])
    if toks[j].is_word("DEFAULT"):
        if prefix == "INSERT OR REPLACE":
            raise D1Unsupported("INSERT OR REPLACE ... DEFAULT VALUES on the DuckDB engine; list the columns")
        after = next_significant(toks, j + 1) or j
        return Insert(prefix, table, name_sql, columns, "default", (j, after + 1), (after + 1, len(toks)), returning)
    end = source_end(toks, j)
    if prefix == "INSERT OR REPLACE" and end < len(toks) and toks[end].is_word("ON"):
        raise D1Unsupported("INSERT OR REPLACE with an ON CONFLICT clause; use one of the two")
    kind = "values" if toks[j].is_word("VALUES") else "select"
    return Insert(prefix, table, name_sql, columns, kind, (j, end), (end, len(toks)), returning)


def _source(em: Emitter, toks: list[Token], ins: Insert, schema: Schema, with_ids: bool) -> tuple[str, bool]:
    """VALUES rows or a SELECT, each value stored as the column keeps it; ids for rowid tables where asked. And
    whether it may hold several rows."""
    walker = Walker(em, toks, ins.source[0], ins.source[1])
    walker.wrap = False  # the SELECT's values are stored, not returned: keep them VARIANTs, not __sq_out structs
    # SQLite reads a VALUES list's subqueries before it inserts any row; a REPLACE's plan deletes rows first
    walker.hoist_subqueries = ins.kind == "values" and ins.prefix in ("INSERT", "INSERT OR IGNORE")
    infos = [ins.table.column_info(c) for c in ins.columns]
    wheres = [f"{ins.table.name}.{c}" for c in ins.columns]
    rowid = ins.table.rowid_column if with_ids else None
    position = next((n for n, c in enumerate(ins.columns) if rowid and c.lower() == rowid.lower()), None)
    # The engine binds the id base as a Python int, which DuckDB may type INTEGER: base + n would overflow at 2^31.
    base = f"CAST({em.extra('id_base')} AS BIGINT)" if rowid else ""
    # Bare literals only where the rows go straight into the table: not into REPLACE's staging table (whose column
    # types its rows would set), nor as the rowid (an operand of coalesce(id, base + n)).
    bare = ins.prefix != "INSERT OR REPLACE"
    # A row's id given as a literal needs no next id (nor the engine its base, a max() query), except in an upsert,
    # whose outcome tells inserted rows from updated ones by that base.
    fixed = not any(t.is_word("CONFLICT") for t in toks[ins.tail[0] : ins.tail[1]])

    def row(values: list[Typed], ordinal: str) -> list[str]:
        if len(values) != len(infos):
            raise D1Unsupported(f"{len(values)} values for {len(infos)} columns")  # SQLite's check runs first
        stored = zip(values, infos, wheres, strict=True)
        out = [(written if bare and n != position else store)(walker.ex, v, info, where) if info else v.sql
               for n, (v, info, where) in enumerate(stored)]
        if rowid and position is None:
            out.insert(0, f"{base} + {ordinal}")
        elif rowid and position is not None and ordinal != "NULL" and not (fixed and _known_id(values[position])):
            out[position] = f"coalesce({out[position]}, {base} + {ordinal})"
        return out

    names = [f"__c{n}" for n in range(len(infos))]
    if ins.kind == "values":
        rows = _value_rows(walker, toks, ins.source)
        if rowid and len(rows) > 1 and _skips(toks, ins):
            _check_ids_given(em, [values[position] for values in rows] if position is not None else None)
        listed_id = _listed_rowid(ins)
        if not rowid and listed_id is not None and len(rows) > 1 and ins.prefix == "INSERT OR REPLACE":
            ids = [values[listed_id] for values in rows]
            if not all(_given(em, v) for v in ids) and any(_given(em, v) for v in ids):
                _check_ids_given(em, None)  # a REPLACE's deletes move the largest rowid between rows
        several = len(rows) > 1
        if position is None or not several:
            listed = ", ".join(f"({', '.join(row(values, str(n)))})" for n, values in enumerate(rows, 1))
            return "VALUES " + listed, several
        stored = ", ".join(f"({n}, {', '.join(row(values, 'NULL'))})" for n, values in enumerate(rows, 1))
        return _listed_ids(em, f"(VALUES {stored}) AS __src(__o, {', '.join(names)})", names, position), several
    if rowid and _skips(toks, ins):
        _check_ids_given(em, None)
    select = walker.write()
    typed = walker.columns if all(c.sql != "*" for c in walker.columns) else _star_columns(toks, ins.source, schema)
    if len(typed) != len(infos):
        typed = [Typed("", "any", aff="?") for _ in infos]
    refs = [Typed(f'__src."{name}"', c.t) for name, c in zip(names, typed, strict=True)]
    if position is None:
        picked = row(refs, "row_number() OVER ()")
        return f"SELECT {', '.join(picked)} FROM ({select}) AS __src({', '.join(names)})", True
    picked = ["row_number() OVER () AS __o", *(f"{v} AS {n}" for v, n in zip(row(refs, "NULL"), names, strict=True))]
    rows_sql = f"(SELECT {', '.join(picked)} FROM ({select}) AS __src({', '.join(names)})) AS __src"
    return _listed_ids(em, rows_sql, names, position), True


# What may follow `SELECT * FROM name [[AS] alias]` for the star to stand for that table's columns alone.
_AFTER_FROM = frozenset({"WHERE", "GROUP", "HAVING", "WINDOW", "ORDER", "LIMIT"})


def _star_columns(toks: list[Token], span: tuple[int, int], schema: Schema) -> list[Typed]:
    """The columns of `SELECT * FROM table ...` (one table, no join, no compound), typed as the table declares them,
    as if the SELECT listed them: their values are then stored without a per-row look at their type (1,000 rows
    copied between two tables: 72 -> 4 ms). [] where the SELECT is any other."""
    sig: list[Token] = []
    depth, clauses = 0, False
    for tok in toks[span[0]:span[1]]:
        if tok.trivia:
            continue
        if depth == 0 and tok.is_word("UNION", "EXCEPT", "INTERSECT"):
            return []  # another arm's columns may have other types
        if tok.kind == "op" and tok.text in "()":
            depth += 1 if tok.text == "(" else -1
        clauses = clauses or (depth == 0 and tok.kind == "word" and tok.upper in _AFTER_FROM)
        if not clauses:
            sig.append(tok)
    head = len(sig) >= 4 and sig[0].is_word("SELECT") and sig[1].text == "*" and sig[2].is_word("FROM")
    if not head or sig[3].kind not in ("word", "qident") or not _alias_only(sig[4:]):
        return []
    table = schema.table(sig[3].name)
    if table is None or len(table.info) != len(table.columns) or any(i.aff == "?" for i in table.info):
        return []  # a view's columns have no declared type
    return [Typed(quote_name(c), DUCK_TYPES.get(info.duck, "any"), aff=info.aff, col_coll=info.coll)
            for c, info in zip(table.columns, table.info, strict=True)]


def _alias_only(rest: list[Token]) -> bool:
    """Nothing, `alias` or `AS alias` after the table's name (no join, no INDEXED BY)."""
    words = [t for t in rest if t.kind in ("word", "qident")]
    if len(words) != len(rest):
        return False
    return not rest or (len(rest) == 1 and not rest[0].is_word("AS")) or (len(rest) == 2 and rest[0].is_word("AS"))


def _as_sqlite_skips(toks: list[Token], ins: Insert, columns: list[str], source: str, several: bool) -> str:
    """The rows SQLite would insert, where DuckDB differs: INSERT OR IGNORE skips a row with NULL in a NOT NULL
    column (DuckDB fails); an upsert fails on such a row even when it conflicts (DuckDB skips or updates); and an
    upsert's later row updates an earlier one with the same key (DuckDB 2.0 keeps the first silently: refused)."""
    names = [f"__k{n}" for n in range(len(columns))]
    lower = [c.lower() for c in columns]
    tail = [t for t in toks[ins.tail[0] : ins.tail[1]] if not t.trivia]
    upsert = any(t.is_word("CONFLICT") for t in tail)
    conditions = []
    if ins.prefix == "INSERT OR IGNORE" or upsert:
        for column in sorted(_required(ins.table)):
            at = lower.index(column.lower()) if column.lower() in lower else None
            if at is None and column in ins.table.defaults:
                continue
            if ins.prefix == "INSERT OR IGNORE":
                conditions.append("false" if at is None else f"{names[at]} IS NOT NULL")
                continue
            why = failure("SQLITE_CONSTRAINT", f"NOT NULL constraint failed: {ins.table.name}.{column}")
            error = f"error('{_quote(why)}')"
            conditions.append(error if at is None else f"CASE WHEN {names[at]} IS NULL THEN {error} ELSE true END")
    keys = _conflict_target(tail)
    if several and keys and any(t.is_word("UPDATE") for t in tail) and all(k in lower for k in keys):
        parts = [names[lower.index(k)] for k in keys]
        present = " AND ".join(f"{p} IS NOT NULL" for p in parts)
        why = refusal(
            "ON CONFLICT DO UPDATE where two rows of one INSERT have the same key, on the DuckDB engine (SQLite "
            "updates the first row with the second); one row per key in each INSERT"
        )
        conditions.append(
            f"CASE WHEN {present} AND count(*) OVER (PARTITION BY {', '.join(parts)}) > 1 "
            f"THEN error('{_quote(why)}') ELSE true END"
        )
    if not conditions:
        return source
    where = " AND ".join(c for c in conditions if "OVER" not in c) or "true"
    qualify = " AND ".join(c for c in conditions if "OVER" in c)
    body = f"SELECT * FROM ({source}) AS __s({', '.join(names)}) WHERE {where}"
    return body + (f" QUALIFY {qualify}" if qualify else "")


def _with_replace_defaults(ins: Insert, source: str) -> str:
    """INSERT OR REPLACE of NULL into a NOT NULL column with a DEFAULT stores the DEFAULT, as SQLite's REPLACE does
    (DuckDB would fail)."""
    lower = [c.lower() for c in ins.columns]
    names = [f"__k{n}" for n in range(len(ins.columns))]
    picks = list(names)
    for column in _required(ins.table):
        text = ins.table.default_text(column)
        if text is None or column.lower() not in lower:
            continue
        at = lower.index(column.lower())
        info = ins.table.column_info(column)
        picks[at] = f"coalesce({names[at]}, {_default_sql(text, info, f'{ins.table.name}.{column}')})"
    if picks == names:
        return source
    return f"SELECT {', '.join(picks)} FROM ({source}) AS __s({', '.join(names)})"


def _default_sql(text: str, info: ColumnInfo | None, where: str) -> str:
    sig = [t for t in tokenize(text) if not t.trivia]
    sign = -1 if sig and sig[0].text == "-" else 1
    sig = sig[1:] if sig and sig[0].text in ("-", "+") else sig
    value = number_or_value(sig[0]) if len(sig) == 1 and info is not None else NOT_LITERAL
    if value is NOT_LITERAL or info is None or (sign < 0 and not isinstance(value, (int, float))):
        why = refusal(
            f"INSERT OR REPLACE of NULL into NOT NULL column {where}, whose DEFAULT is an expression, on the DuckDB "
            "engine; give the value"
        )
        return f"error('{_quote(why)}')"
    number: Any = value
    return stored_literal(-number if sign < 0 else number, info, f"DEFAULT of column {where}")


def _required(table: TableInfo) -> set[str]:
    """NOT NULL columns other than the rowid (whose NULL means: the next id)."""
    rowid = (table.rowid_column or "").lower()
    return {c for c in table.not_null if c.lower() != rowid}


def _quote(text: str) -> str:
    return text.replace("'", "''")


def _conflict_target(tail: list[Token]) -> list[str]:
    """The columns of `ON CONFLICT (a, b)`, lower case; [] without a target."""
    at = next((i for i, t in enumerate(tail) if t.is_word("CONFLICT")), None)
    if at is None or at + 1 >= len(tail) or tail[at + 1].text != "(":
        return []
    out: list[str] = []
    for tok in tail[at + 2 :]:
        if tok.text == ")":
            return out
        if tok.kind in ("word", "qident"):
            out.append(tok.name.lower())
    return out


def _skips(toks: list[Token], ins: Insert) -> bool:
    """OR IGNORE or ON CONFLICT: rows that conflict are not inserted, and take no rowid."""
    return ins.prefix == "INSERT OR IGNORE" or any(t.is_word("CONFLICT") for t in toks[ins.tail[0] : ins.tail[1]])


def _listed_rowid(ins: Insert) -> int | None:
    rowid = (ins.table.rowid_column or "").lower()
    return next((n for n, c in enumerate(ins.columns) if rowid and c.lower() == rowid), None)


def _known_id(v: Typed) -> bool:
    return v.known and v.const is not None


def _given(em: Emitter, v: Typed) -> bool:
    return (v.known and v.const is not None) or bool(v.param and em.param_class(v.param) != "n")


def _check_ids_given(em: Emitter, ids: list[Typed] | None) -> None:
    """SQLite numbers the rows of a multi-row INSERT one by one, skipping those a conflict leaves out: which rows
    those are only running the statement tells. Refused unless every row gives its id."""
    if ids is None or not all(_given(em, v) for v in ids):
        raise D1Unsupported(
            "INSERT OR IGNORE or ON CONFLICT of several rows into a table with an INTEGER PRIMARY KEY, some without "
            "an id, on the DuckDB engine (SQLite numbers only the rows it inserts); give each row its id, or insert "
            "one row per statement in a batch()"
        )


def _listed_ids(em: Emitter, rows_sql: str, names: list[str], position: int) -> str:
    """Ids of several rows whose rowid column is listed, as SQLite gives them row by row: a NULL id is one more than
    the largest rowid so far (the table's, or one an earlier row of this statement gave; 1 for the first row of an
    empty table). With n_i the NULL ids up to row i, that is n_i + max(top, the earlier explicit ids g_j - n_j)."""
    g = names[position]
    window = "OVER (ORDER BY __o ROWS UNBOUNDED PRECEDING)"
    counted = f"SELECT *, count(*) FILTER (WHERE {g} IS NULL) {window} AS __n FROM {rows_sql}"
    top = f"CAST({em.extra('id_top')} AS HUGEINT)"  # NULL: an empty table
    given = f"max(CAST({g} AS HUGEINT) - __n) {window}"
    anchor = f"coalesce(greatest({top}, {given}), {top}, {given}, 0)"
    out = [f"CAST(coalesce({g}, {anchor} + __n) AS BIGINT)" if n == position else c for n, c in enumerate(names)]
    return f"SELECT {', '.join(out)} FROM ({counted}) AS __ids ORDER BY __o"


def _value_rows(walker: object, toks: list[Token], span: tuple[int, int]) -> list[list[Typed]]:
    rows = []
    i = next_significant(toks, span[0] + 1)  # after VALUES
    while i is not None and i < span[1] and toks[i].text == "(":
        close = match_paren(toks, i)
        rows.append([walker.value(lo, hi) for lo, hi in split_args(toks, i, close)])  # type: ignore[attr-defined]
        i = next_significant(toks, close + 1)
        if i is None or i >= span[1] or toks[i].text != ",":
            break
        i = next_significant(toks, i + 1)
    return rows


def _tail(em: Emitter, toks: list[Token], ins: Insert) -> str:
    lo, hi = ins.tail
    return em.emit(toks, lo, hi) if lo < hi else ""


def source_end(body: list[Token], start: int) -> int:
    depth = 0
    for i in range(start, len(body)):
        tok = body[i]
        if tok.kind == "op" and tok.text in "()":
            depth += 1 if tok.text == "(" else -1
        elif depth == 0 and (tok.is_word("RETURNING") or (tok.is_word("ON") and _is_conflict(body, i))):
            return i
    return len(body)


def _is_conflict(body: list[Token], i: int) -> bool:
    nxt = next_significant(body, i + 1)
    return nxt is not None and body[nxt].is_word("CONFLICT")
