"""SQLite's table-valued JSON functions, json_each() and json_tree(), on DuckDB with SQLite's answers.

DuckDB has functions of those names, but not SQLite's: its `value` and `atom` are JSON (typeof() says 'text' for
a number), an array's `key` is the text '0', `type` names DuckDB's types and a large integer is lost. So the call
in a FROM clause becomes a subquery over a Python function that asks sqlite3 itself for the rows (exact by
construction: ids, full keys, JSON text of containers, malformed-JSON errors), made VARIANTs so each value
keeps SQLite's type; the statement's scope knows the columns' types (`table_info`) so typeof(), comparisons,
ORDER BY and stored values follow SQLite's rules. The hidden columns `json` and `root` are refused.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from memory_sim.bindings.d1_sql import Token
from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect.operands import Typed
from memory_sim.local.d1.dialect.schema import ColumnInfo, TableInfo
from memory_sim.local.d1.dialect.udfs import ORACLE, SqliteFailure, failure, plain, primary_code

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


def from_item(name: str, args: list[Typed], alias: bool) -> str:
    """The call as a DuckDB subquery with SQLite's columns; named after the function where the user gave no alias
    (SQLite lets `json_each.value` name its column)."""
    if not 1 <= len(args) <= 2:
        raise D1Unsupported(f"{name}() takes one or two arguments (the JSON, and a path)")
    values = ", ".join(f"CAST({a.sql} AS VARIANT)" for a in args)
    sql = f"({_SELECT} FROM (SELECT {_UNNESTED} FROM (SELECT __sq_{name}_{len(args)}({values}) AS {_ROWS})))"
    return sql if alias else f"{sql} AS {name}"


def refuse_hidden(name: str, column: str) -> None:
    raise D1Unsupported(
        f"the hidden column {column} of {name}() on the DuckDB engine; select the JSON argument itself "
        "(or its path) as a value of its own"
    )


def rows(name: str, json: Any, path: Any = None, with_path: bool = False) -> dict[str, list[Any]]:
    """SQLite's rows of json_each/json_tree(json[, path]), asked of sqlite3, as the function's columns."""
    sql = f"SELECT {', '.join(_COLUMNS)} FROM {name}(?1{', ?2' if with_path else ''})"
    args = (plain(json), plain(path)) if with_path else (plain(json),)
    try:
        found = ORACLE.conn().execute(sql, args).fetchall()
    except sqlite3.Error as exc:
        code = getattr(exc, "sqlite_errorname", None) or "SQLITE_ERROR"
        raise SqliteFailure(failure(primary_code(code), str(exc))) from None
    return _fields(found)


def _fields(found: list[tuple[Any, ...]]) -> dict[str, list[Any]]:
    """sqlite3's rows as the function's columns (atom is the value of a scalar: the subquery derives it)."""
    keys, values = [r[0] for r in found], [r[1] for r in found]
    return {
        "ki": [k if isinstance(k, int) else None for k in keys],
        "ks": [k if isinstance(k, str) else None for k in keys],
        "vi": [v if isinstance(v, int) else None for v in values],
        "vf": [v if isinstance(v, float) else None for v in values],
        "vs": [v if isinstance(v, str) else None for v in values],
        "type": [r[2] for r in found], "id": [r[4] for r in found], "parent": [r[5] for r in found],
        "fullkey": [r[6] for r in found], "path": [r[7] for r in found],
    }


def _one(name: str) -> Callable[[Any], dict[str, list[Any]]]:
    return lambda json: rows(name, json)


def _two(name: str) -> Callable[[Any, Any], dict[str, list[Any]]]:
    return lambda json, path: rows(name, json, path, True)


def register(conn: Any) -> None:
    """Install __sq_json_each_1/2 and __sq_json_tree_1/2 on a DuckDB connection (DuckDB reads a Python function's
    arity from its signature: one function per arity)."""
    for name in sorted(FUNCTIONS):
        conn.create_function(f"__sq_{name}_1", _one(name), ["VARIANT"], _COLUMNS_TYPE,
                             null_handling="special", side_effects=False)
        conn.create_function(f"__sq_{name}_2", _two(name), ["VARIANT", "VARIANT"], _COLUMNS_TYPE,
                             null_handling="special", side_effects=False)


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
    for i in range(len(toks)):
        after = _next(toks, i + 1, len(toks))
        if is_call(toks, i, after):
            found.append((toks[i].text.lower(), alias(toks, closing(toks, after) + 1, len(toks))))  # type: ignore[arg-type]
    return found
