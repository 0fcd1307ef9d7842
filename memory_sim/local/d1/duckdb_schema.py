"""The DuckDB engine's view of its schema: the tables and views the schema mirror (sqlite3) declares, each column's
DuckDB type (from DuckDB's catalog), SQLite affinity and declared collation, rowid columns and unique keys."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from typing import Any

from memory_sim.bindings.d1_sql import tokenize
from memory_sim.errors import D1Error
from memory_sim.local.d1.dialect import values as sv
from memory_sim.local.d1.dialect.schema import ColumnInfo, Schema, TableInfo, column_type, quote_name


def schema_of(mirror: sqlite3.Connection, conn: Any = None, types: dict[tuple[str, str], str] | None = None,
              kept: dict[tuple[Any, ...], TableInfo] | None = None) -> Schema:
    """The tables and views as the mirror declares them, with each column's DuckDB type (from DuckDB's catalog
    when `conn`, or `types` read from it by duck_types, is given: older files may hold other types than today's
    mapping). `kept`: a table's info by all it is read from (its CREATE text, its indexes', its DuckDB types), so
    that after one DDL statement only what it changed is read again (views always are: they read other tables)."""
    tables: dict[str, TableInfo] = {}
    duck = types if types is not None else duck_types(conn)
    indexes: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
    typed: dict[str, list[tuple[str, str]]] = defaultdict(list)
    if kept is not None:
        for table, index, text in mirror.execute("SELECT tbl_name, name, sql FROM sqlite_master WHERE type = 'index'"):
            indexes[str(table).lower()].append((index, text))
        for (table, column), duck_type in duck.items():
            typed[table].append((column, duck_type))
    query = "SELECT name, sql, type FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'"
    for name, sql, kind in mirror.execute(query).fetchall():
        lower = name.lower()
        key = (name, sql, tuple(sorted(indexes[lower])), tuple(sorted(typed[lower]))) if kind == "table" else None
        found = kept.get(key) if kept is not None and key is not None else None
        if found is None:
            found = _table_info(mirror, name, sql, kind, duck)
            if found is None:
                continue  # a view over something that is gone: SQLite itself reports it when the view is used
            if kept is not None and key is not None:
                kept[key] = found
        tables[name] = found
    return Schema(tables)


def _table_info(mirror: sqlite3.Connection, name: str, sql: str | None, kind: str,
                duck: dict[tuple[str, str], str]) -> TableInfo | None:
    try:
        info = mirror.execute(f"PRAGMA table_info({quote_name(name)})").fetchall()  # cid, name, type, notnull, ...
    except sqlite3.Error:
        return None
    toks = [t for t in tokenize(sql or "") if not t.trivia]
    words = {t.upper for t in toks if t.kind == "word"}
    keys = [row for row in info if row[5] > 0]
    is_alias = (
        kind == "table" and len(keys) == 1 and str(keys[0][2]).upper() == "INTEGER" and "WITHOUT" not in words
    )
    rowid = keys[0][1] if is_alias else None
    collations = declared_collations(sql or "") if kind == "table" else {}
    columns = tuple(r[1] for r in info)
    return TableInfo(
        name,
        columns,
        rowid,
        "AUTOINCREMENT" in words,
        _unique_keys(mirror, name, rowid) if kind == "table" else (),
        frozenset(r[1] for r in info if r[4] is not None),
        any(t.is_word("REFERENCES") and i + 1 < len(toks) and toks[i + 1].name.lower() == name.lower()
            for i, t in enumerate(toks)),
        tuple(
            ColumnInfo(
                duck.get((name.lower(), column.lower())) or _mapped(str(declared)),
                sv.affinity(str(declared)) if kind == "table" else "?",
                collations.get(column.lower(), ""),
            )
            for column, declared in zip(columns, (r[2] for r in info), strict=False)
        ),
        not_null=frozenset(r[1] for r in info if r[3]),
        default_texts=tuple((r[1], str(r[4])) for r in info if r[4] is not None),
    )


def duck_types(conn: Any) -> dict[tuple[str, str], str]:
    """(table, column), lower case -> the column's type in DuckDB's catalog."""
    if conn is None:
        return {}
    rows = conn.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE database_name = current_database() "
        "AND schema_name = 'main' AND NOT internal"
    ).fetchall()
    return {(t.lower(), c.lower()): str(d) for t, c, d in rows}


def _mapped(declared: str) -> str:
    try:
        return column_type(declared)
    except D1Error:
        return "VARIANT"


def declared_collations(sql: str) -> dict[str, str]:
    """Column -> collation (NOCASE, RTRIM) as a CREATE TABLE statement declares them."""
    toks = [t for t in tokenize(sql) if not t.trivia]
    open_i = next((i for i, t in enumerate(toks) if t.text == "("), None)
    found: dict[str, str] = {}
    if open_i is None:
        return found
    depth, start = 0, open_i + 1
    for i in range(open_i, len(toks)):
        tok = toks[i]
        if tok.text == "(":
            depth += 1
        elif tok.text == ")":
            depth -= 1
        if (tok.text == "," and depth == 1) or depth == 0:
            part = toks[start:i]
            for k, t in enumerate(part[:-1]):
                if t.is_word("COLLATE") and part and part[0].kind in ("word", "qident"):
                    name = part[k + 1].name.upper()
                    if name != "BINARY":
                        found[part[0].name.lower()] = name
            start = i + 1
            if depth == 0:
                break
    return found


def _unique_keys(mirror: sqlite3.Connection, table: str, rowid: str | None) -> tuple[tuple[str, ...], ...]:
    keys = [(rowid,)] if rowid is not None else []
    for _, index, unique, _, partial in mirror.execute(f"PRAGMA index_list({quote_name(table)})").fetchall():
        if unique and not partial:
            info = mirror.execute(f"PRAGMA index_info({quote_name(index)})").fetchall()  # seqno, cid, name
            keys.append(tuple(row[2] for row in sorted(info)))
    return tuple(keys)


def check_constraints(mirror: sqlite3.Connection, table: str) -> list[str]:
    """A table's CHECK constraints as SQLite names them when one fails: the constraint's name, else its
    expression as written."""
    row = mirror.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    toks = list(tokenize(row[0] if row and row[0] else ""))
    found = []
    for i, tok in enumerate(toks):
        if not tok.is_word("CHECK"):
            continue
        sig = [k for k in range(i - 1, -1, -1) if not toks[k].trivia][:2]
        named = len(sig) == 2 and toks[sig[1]].is_word("CONSTRAINT")
        open_i = next((k for k in range(i + 1, len(toks)) if toks[k].text == "("), None)
        if open_i is None:
            continue
        depth, close = 0, open_i
        for k in range(open_i, len(toks)):
            depth += (toks[k].text == "(") - (toks[k].text == ")") if toks[k].kind == "op" else 0
            if depth == 0:
                close = k
                break
        found.append(toks[sig[0]].name if named else "".join(t.text for t in toks[open_i + 1 : close]).strip())
    return found
