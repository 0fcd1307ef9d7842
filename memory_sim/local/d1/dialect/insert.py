"""INSERT (and REPLACE) with SQLite's meaning on DuckDB: each value is written as the column's affinity keeps it
(store.py), rows without an INTEGER PRIMARY KEY id get SQLite's next rowid (max + 1 upward, counted from a base
the engine binds), and INSERT OR REPLACE becomes the plan of replace.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_sim.bindings.d1_sql import Token
from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect.clauses import Walker
from memory_sim.local.d1.dialect.expressions import Emitter, Translation, match_paren, next_significant, split_args
from memory_sim.local.d1.dialect.names import name_result_columns
from memory_sim.local.d1.dialect.operands import Typed
from memory_sim.local.d1.dialect.replace import replace_plan
from memory_sim.local.d1.dialect.schema import Schema, TableInfo, quote_name
from memory_sim.local.d1.dialect.store import store


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
        source = _source(em, toks, ins, with_ids=False)
        return replace_plan(em, ins, source, _tail(em, toks, ins))
    rowid = ins.table.rowid_column
    columns = list(ins.columns)
    if rowid is not None and rowid.lower() not in (c.lower() for c in columns):
        columns.insert(0, rowid)
    if ins.kind == "default":
        body = f"({quote_name(rowid)}) VALUES ({em.extra('id_base')} + 1)" if rowid else "DEFAULT VALUES"
    else:
        body = f"({', '.join(quote_name(c) for c in columns)}) {_source(em, toks, ins, with_ids=rowid is not None)}"
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


def _source(em: Emitter, toks: list[Token], ins: Insert, with_ids: bool) -> str:
    """VALUES rows or a SELECT, each value stored as the column keeps it; ids for rowid tables where asked."""
    walker = Walker(em, toks, ins.source[0], ins.source[1])
    infos = [ins.table.column_info(c) for c in ins.columns]
    wheres = [f"{ins.table.name}.{c}" for c in ins.columns]
    rowid = ins.table.rowid_column if with_ids else None
    position = next((n for n, c in enumerate(ins.columns) if rowid and c.lower() == rowid.lower()), None)
    base = em.extra("id_base") if rowid else ""

    def row(values: list[Typed], ordinal: str) -> list[str]:
        if len(values) != len(infos):
            raise D1Unsupported(f"{len(values)} values for {len(infos)} columns")  # SQLite's check runs first
        stored = zip(values, infos, wheres, strict=True)
        out = [store(walker.ex, v, info, where) if info else v.sql for v, info, where in stored]
        if rowid and position is None:
            out.insert(0, f"{base} + {ordinal}")
        elif rowid and position is not None:
            out[position] = f"coalesce({out[position]}, {base} + {ordinal})"
        return out

    if ins.kind == "values":
        rows = _value_rows(walker, toks, ins.source)
        return "VALUES " + ", ".join(f"({', '.join(row(values, str(n)))})" for n, values in enumerate(rows, 1))
    select = walker.write()
    typed = walker.columns if all(c.sql != "*" for c in walker.columns) else []
    names = [f"__c{n}" for n in range(len(infos))]
    if len(typed) != len(infos):
        typed = [Typed("", "any", aff="?") for _ in infos]
    refs = [Typed(f'__src."{name}"', c.t) for name, c in zip(names, typed, strict=True)]
    listed = row(refs, "row_number() OVER ()")
    return f"SELECT {', '.join(listed)} FROM ({select}) AS __src({', '.join(names)})"


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
