"""SQLite's table-valued JSON functions, json_each() and json_tree(), on DuckDB with SQLite's answers.

DuckDB has functions of those names, but not SQLite's: its `value` and `atom` are JSON (typeof() says 'text' for
a number), an array's `key` is the text '0', `type` names DuckDB's types and a large integer is lost. So the call
in a FROM clause becomes a subquery over a Python function that asks sqlite3 itself for the rows (exact by
construction: ids, full keys, JSON text of containers, malformed-JSON errors), made VARIANTs so each value
keeps SQLite's type; the statement's scope knows the columns' types (`table_info`) so typeof(), comparisons,
ORDER BY and stored values follow SQLite's rules. The hidden columns `json` and `root` are refused.

Only the columns a statement can name are asked for and handed over (`named_columns`); the others come back
NULL, unseen. Handing DuckDB Python values is most of the cost: a decay pass's UPDATE ... FROM json_each(?) names
key and value, and reads 20,000 pairs in about half the time that way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from memory_sim.bindings.d1_sql import Token
from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect.operands import Typed
from memory_sim.local.d1.dialect.schema import ColumnInfo, TableInfo
from memory_sim.local.d1.dialect.udfs import ORACLE, SqliteFailure, create_function, failure, plain, primary_code

FUNCTIONS = frozenset({"json_each", "json_tree"})
HIDDEN = frozenset({"json", "root"})
_COLUMNS = ("key", "value", "type", "atom", "id", "parent", "fullkey", "path")
# Declared without types in SQLite's module ("CREATE TABLE x(key,value,type,...)"): every column has BLOB affinity.
_DUCK = {"key": "VARIANT", "value": "VARIANT", "atom": "VARIANT", "id": "BIGINT", "parent": "BIGINT"}
# The Python function returns plain fields, one per storage class, column by column (DuckDB converts Python values
# into VARIANTs some thirty times slower, and a list of rows twice as slowly as lists of values); the subquery
# unnests the columns side by side and makes the VARIANTs.
_FIELDS = {"ki": "BIGINT", "ks": "VARCHAR", "vi": "BIGINT", "vf": "DOUBLE", "vs": "VARCHAR", "type": "VARCHAR",
           "id": "BIGINT", "parent": "BIGINT", "fullkey": "VARCHAR", "path": "VARCHAR"}
_COLUMNS_TYPE = "STRUCT(" + ", ".join(f'"{f}" {t}[]' for f, t in _FIELDS.items()) + ")"
# What sqlite3 is asked for to give a column (atom: the value, by the type); id is always read: it counts the rows.
_READ_FOR = {"key": ("key",), "value": ("value",), "atom": ("value", "type"), "type": ("type",), "id": ("id",),
             "parent": ("parent",), "fullkey": ("fullkey",), "path": ("path",)}
_READABLE = tuple(c for c in _COLUMNS if c != "atom")
_ROWS = "__sq_json_rows"  # the function's result, named so the sandbox knows these unnest() calls as the engine's
_UNNESTED = ", ".join(f'unnest({_ROWS}."{f}") AS "{f}"' for f in _FIELDS)
_VALUE = "coalesce(CAST(vi AS VARIANT), CAST(vf AS VARIANT), CAST(vs AS VARIANT))"
_SELECT = (
    'SELECT coalesce(CAST(ki AS VARIANT), CAST(ks AS VARIANT)) AS "key", ' + _VALUE + ' AS "value", "type", '
    f"CASE WHEN \"type\" IN ('array', 'object') THEN NULL ELSE {_VALUE} END AS atom, id, parent, fullkey, path"
)


def table_info(name: str) -> TableInfo:
    """The columns json_each() / json_tree() give, as the typed emitter resolves them."""
    info = tuple(ColumnInfo(_DUCK.get(c, "VARCHAR"), "BLOB") for c in _COLUMNS)
    return TableInfo(name, _COLUMNS, None, info=info)


def is_call(toks: list[Token], i: int, after: int | None) -> bool:
    """toks[i] names json_each or json_tree and `after` (its next significant token) opens the arguments."""
    tok = toks[i]
    return tok.kind == "word" and tok.text.lower() in FUNCTIONS and after is not None and toks[after].text == "("


def named_columns(toks: Sequence[Token]) -> frozenset[str]:
    """The columns of json_each/json_tree a statement can read: those it names anywhere (as an identifier), or
    all of them where it has a `*` (SELECT *, j.*, count(*): no need to tell which) or a NATURAL join (which
    names none)."""
    if any((t.kind == "op" and t.text == "*") or t.is_word("NATURAL") for t in toks):
        return frozenset(_COLUMNS)
    return frozenset(t.name.lower() for t in toks if t.kind in ("word", "qident")) & frozenset(_COLUMNS)


def from_item(name: str, args: list[Typed], alias: bool, columns: frozenset[str] = frozenset(_COLUMNS)) -> str:
    """The call as a DuckDB subquery with SQLite's columns, `columns` filled and the others NULL; named after the
    function where the user gave no alias (SQLite lets `json_each.value` name its column)."""
    if not 1 <= len(args) <= 2:
        raise D1Unsupported(f"{name}() takes one or two arguments (the JSON, and a path)")
    read = ",".join(c for c in _READABLE if any(c in _READ_FOR[n] for n in columns))
    values = ", ".join(f"CAST({a.sql} AS VARIANT)" for a in args)
    call = f"__sq_{name}_{len(args)}({values}, '{read}')"
    sql = f"({_SELECT} FROM (SELECT {_UNNESTED} FROM (SELECT {call} AS {_ROWS})))"
    return sql if alias else f"{sql} AS {name}"


def refuse_hidden(name: str, column: str) -> None:
    raise D1Unsupported(
        f"the hidden column {column} of {name}() on the DuckDB engine; select the JSON argument itself "
        "(or its path) as a value of its own"
    )


def rows(
    name: str, json: Any, path: Any = None, with_path: bool = False, read: str = ",".join(_READABLE)
) -> dict[str, list[Any]]:
    """SQLite's rows of json_each/json_tree(json[, path]), asked of sqlite3 for id and the columns `read` names,
    as the function's fields: those of other columns empty (the subquery's unnest makes them NULL)."""
    named = read.split(",")
    columns = [c for c in _READABLE if c == "id" or c in named]  # our own names only: the SQL is built from them
    sql = f"SELECT {', '.join(columns)} FROM {name}(?1{', ?2' if with_path else ''})"
    args = (plain(json), plain(path)) if with_path else (plain(json),)
    try:
        found = ORACLE.conn().execute(sql, args).fetchall()
    except sqlite3.Error as exc:
        code = getattr(exc, "sqlite_errorname", None) or "SQLITE_ERROR"
        raise SqliteFailure(failure(primary_code(code), str(exc))) from None
    return _fields(found, columns)


def _fields(found: list[tuple[Any, ...]], columns: list[str]) -> dict[str, list[Any]]:
    """sqlite3's rows (of `columns`) as the function's fields. A field not read, or all NULL, is handed over
    empty: DuckDB converts every Python value it is given, and unnest pads an empty list with NULLs."""
    at = {c: k for k, c in enumerate(columns)}
    out: dict[str, list[Any]] = {f: [] for f in _FIELDS}
    out["id"] = [r[at["id"]] for r in found]
    if "key" in at:
        keys = [r[at["key"]] for r in found]
        out["ki"] = [k if isinstance(k, int) else None for k in keys]
        out["ks"] = [k if isinstance(k, str) else None for k in keys]
    if "value" in at:  # atom too: the subquery derives it from the value and the type
        values = [r[at["value"]] for r in found]
        out["vi"] = [v if isinstance(v, int) else None for v in values]
        out["vf"] = [v if isinstance(v, float) else None for v in values]
        out["vs"] = [v if isinstance(v, str) else None for v in values]
    for column in ("type", "parent", "fullkey", "path"):
        if column in at:
            out[column] = [r[at[column]] for r in found]
    return {f: values if any(v is not None for v in values) else [] for f, values in out.items()}


def _one(name: str) -> Callable[[Any, str], dict[str, list[Any]]]:
    return lambda json, read: rows(name, json, read=read)


def _two(name: str) -> Callable[[Any, Any, str], dict[str, list[Any]]]:
    return lambda json, path, read: rows(name, json, path, True, read)


def register(conn: Any) -> None:
    """Install __sq_json_each_1/2 and __sq_json_tree_1/2 on a DuckDB connection (DuckDB reads a Python function's
    arity from its signature: one function per arity; the last argument names the columns to read)."""
    for name in sorted(FUNCTIONS):
        create_function(conn, f"__sq_{name}_1", _one(name), ["VARIANT", "VARCHAR"], _COLUMNS_TYPE)
        create_function(conn, f"__sq_{name}_2", _two(name), ["VARIANT", "VARIANT", "VARCHAR"], _COLUMNS_TYPE)


# --- where the calls are in a statement ------------------------------------------------------------------------
# Words that may follow a FROM item and so are not its alias.
_NOT_ALIAS = frozenset(
    "WHERE JOIN LEFT RIGHT INNER OUTER CROSS NATURAL FULL ON USING SET ORDER GROUP HAVING LIMIT UNION EXCEPT "
    "INTERSECT WINDOW VALUES SELECT DEFAULT RETURNING INDEXED NOT DO OFFSET".split()
)


def _next(toks: list[Token], i: int, hi: int) -> int | None:
    while i < hi and toks[i].trivia:
        i += 1
    return i if i < hi else None


def closing(toks: list[Token], open_i: int) -> int:
    depth = 0
    for k in range(open_i, len(toks)):
        if toks[k].kind == "op" and toks[k].text in "()":
            depth += 1 if toks[k].text == "(" else -1
            if depth == 0:
                return k
    raise D1Unsupported("unbalanced parentheses")


def argument_ranges(toks: list[Token], open_i: int, close_i: int) -> list[tuple[int, int]]:
    """The [lo, hi) ranges of the comma-separated arguments between a call's parentheses."""
    ranges, depth, start = [], 0, open_i + 1
    for k in range(open_i + 1, close_i):
        tok = toks[k]
        if tok.kind == "op" and tok.text in "()":
            depth += 1 if tok.text == "(" else -1
        elif tok.kind == "op" and tok.text == "," and depth == 0:
            ranges.append((start, k))
            start = k + 1
    if ranges or _next(toks, start, close_i) is not None:
        ranges.append((start, close_i))
    return ranges


def alias(toks: list[Token], after: int, hi: int) -> str | None:
    """The alias given to the FROM item that ends before `after`, if any."""
    k = _next(toks, after, hi)
    if k is not None and toks[k].is_word("AS"):
        k = _next(toks, k + 1, hi)
    if k is not None and toks[k].kind in ("word", "qident") and toks[k].upper not in _NOT_ALIAS:
        return toks[k].name
    return None


def calls(toks: list[Token]) -> list[tuple[str, str | None]]:
    """Each json_each / json_tree call of the statement, with its alias (None where it has none)."""
    found = []
    for i, tok in enumerate(toks):
        if tok.kind != "word" or tok.text.lower() not in FUNCTIONS:
            continue  # is_call's first test, before looking for the next token (most statements name neither)
        after = _next(toks, i + 1, len(toks))
        if is_call(toks, i, after):
            found.append((toks[i].text.lower(), alias(toks, closing(toks, after) + 1, len(toks))))  # type: ignore[arg-type]
    return found
