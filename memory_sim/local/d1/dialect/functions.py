"""SQLite's functions on DuckDB: macros where DuckDB can compute the same thing natively, and for the rest
(date/time and JSON extraction, whose result types vary row by row) Python functions that ask an in-process
sqlite3 for the answer, so the results are SQLite's own. Registered on every DuckDB connection.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from memory_sim.local.d1.dialect import json_table, udfs

# Functions whose answers are delegated to sqlite3; the DuckDB name is __sq_<name>_<arity>.
DELEGATED = ("datetime", "date", "time", "strftime", "julianday", "unixepoch", "json_extract", "->>")
MAX_DELEGATED_ARGS = 6

# SQLite's text forms of the current time, computed natively (also usable in DEFAULT clauses).
_UTC = "(current_timestamp AT TIME ZONE 'UTC')"
NOW_TEXT = {
    "CURRENT_TIMESTAMP": f"strftime({_UTC}, '%Y-%m-%d %H:%M:%S')",
    "CURRENT_DATE": f"strftime({_UTC}, '%Y-%m-%d')",
    "CURRENT_TIME": f"strftime({_UTC}, '%H:%M:%S')",
}
NOW_CALLS = {
    "datetime": NOW_TEXT["CURRENT_TIMESTAMP"],
    "date": NOW_TEXT["CURRENT_DATE"],
    "time": NOW_TEXT["CURRENT_TIME"],
    "unixepoch": f"CAST(epoch({_UTC}::TIMESTAMP) AS BIGINT)",
}

_INTEGER_TYPES = (
    "'BIGINT','INTEGER','HUGEINT','SMALLINT','TINYINT','UBIGINT','UINTEGER','USMALLINT','UTINYINT','BOOLEAN'"
)
_VARIANT_INTEGER = "'INT8','INT16','INT32','INT64','UINT8','UINT16','UINT32','UINT64','BOOL_TRUE','BOOL_FALSE'"

def _fold(x: str) -> str:
    return f"translate(CAST({x} AS VARCHAR), '{_UPPER}', '{_UPPER.lower()}')"


def _ascii(x: str) -> str:
    return f"strlen(CAST({x} AS VARCHAR)) = length(CAST({x} AS VARCHAR))"


_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MACROS = (
    # typeof with SQLite's names; values from delegated functions are VARIANTs, typed by their content.
    f"""CREATE OR REPLACE TEMP MACRO __sq_typeof(x) AS CASE
        WHEN x IS NULL THEN 'null'
        WHEN typeof(x) IN ({_INTEGER_TYPES}) THEN 'integer'
        WHEN typeof(x) IN ('DOUBLE','FLOAT') OR typeof(x) LIKE 'DECIMAL%' THEN 'real'
        WHEN typeof(x) = 'BLOB' THEN 'blob'
        WHEN typeof(x) = 'VARIANT' THEN CASE
            WHEN variant_typeof(x::VARIANT) IN ({_VARIANT_INTEGER}) THEN 'integer'
            WHEN variant_typeof(x::VARIANT) IN ('DOUBLE','FLOAT')
                OR variant_typeof(x::VARIANT) LIKE 'DECIMAL%' THEN 'real'
            WHEN variant_typeof(x::VARIANT) = 'BLOB' THEN 'blob'
            ELSE 'text' END
        ELSE 'text' END""",
    # SQLite's multi-argument max/min: NULL when any argument is NULL (DuckDB's greatest skips NULLs).
    """CREATE OR REPLACE TEMP MACRO __sq_max(a, b) AS CASE WHEN a IS NULL OR b IS NULL THEN NULL
            ELSE greatest(a, b) END,
        (a, b, c) AS CASE WHEN a IS NULL OR b IS NULL OR c IS NULL THEN NULL ELSE greatest(a, b, c) END,
        (a, b, c, d) AS CASE WHEN a IS NULL OR b IS NULL OR c IS NULL OR d IS NULL THEN NULL
            ELSE greatest(a, b, c, d) END""",
    """CREATE OR REPLACE TEMP MACRO __sq_min(a, b) AS CASE WHEN a IS NULL OR b IS NULL THEN NULL ELSE least(a, b) END,
        (a, b, c) AS CASE WHEN a IS NULL OR b IS NULL OR c IS NULL THEN NULL ELSE least(a, b, c) END,
        (a, b, c, d) AS CASE WHEN a IS NULL OR b IS NULL OR c IS NULL OR d IS NULL THEN NULL
            ELSE least(a, b, c, d) END""",
    # LIKE folding ASCII case only, as SQLite does (DuckDB's ILIKE folds all of Unicode); see like.py.
    # ILIKE is exact on ASCII text and a superset elsewhere, so the slow translate() check runs only on the
    # non-ASCII rows ILIKE lets through (strlen counts bytes, length characters).
    f"""CREATE OR REPLACE TEMP MACRO __sq_like(x, p) AS CAST(x AS VARCHAR) ILIKE p
            AND ({_ascii("x")} AND {_ascii("p")} OR {_fold("x")} LIKE {_fold("p")}),
        (x, p, e) AS ilike_escape(CAST(x AS VARCHAR), p, e)
            AND ({_ascii("x")} AND {_ascii("p")} OR like_escape({_fold("x")}, {_fold("p")}, {_fold("e")}))""",
    # total(): like sum() but 0.0 on no rows and always real.
    "CREATE OR REPLACE TEMP MACRO __sq_total(x) AS coalesce(CAST(sum(x) AS DOUBLE), 0.0)",
    # CAST(x AS INTEGER) truncates toward zero in SQLite; DuckDB rounds. Non-numeric text gives 0.
    """CREATE OR REPLACE TEMP MACRO __sq_int(x) AS CASE WHEN x IS NULL THEN NULL
        WHEN TRY_CAST(x AS BIGINT) IS NOT NULL AND TRY_CAST(x AS DOUBLE) = trunc(TRY_CAST(x AS DOUBLE))
            THEN TRY_CAST(x AS BIGINT)
        ELSE coalesce(CAST(trunc(TRY_CAST(x AS DOUBLE)) AS BIGINT), 0) END""",
)


class _SqliteOracle:
    """One sqlite3 connection per thread (DuckDB calls Python functions from its worker threads)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def query(self, sql: str, args: tuple[Any, ...]) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            from memory_sim.local.d1.sqlite_sandbox import Sandbox

            conn = self._local.conn = sqlite3.connect(":memory:")
            Sandbox(conn)
        try:
            return conn.execute(sql, args).fetchone()[0]
        except sqlite3.Error:
            return None  # SQLite's date functions answer NULL for input they cannot read


_ORACLE = _SqliteOracle()


def _sqlite_call(name: str, arity: int) -> str:
    marks = ", ".join("?" * arity)
    return "SELECT ? ->> ?" if name == "->>" else f"SELECT {name}({marks})"


def _delegate(sql: str, arity: int) -> Callable[..., Any]:
    """DuckDB reads a Python function's arity from its signature, so each arity gets its own lambda."""

    def ask(*args: Any) -> Any:
        return _ORACLE.query(sql, tuple(_plain(a) for a in args))

    by_arity: dict[int, Callable[..., Any]] = {
        1: lambda a: ask(a),
        2: lambda a, b: ask(a, b),
        3: lambda a, b, c: ask(a, b, c),
        4: lambda a, b, c, d: ask(a, b, c, d),
        5: lambda a, b, c, d, e: ask(a, b, c, d, e),
        6: lambda a, b, c, d, e, f: ask(a, b, c, d, e, f),
    }
    return by_arity[arity]


def _plain(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float, str, bytes)) or value is None:
        return value
    return str(value)


def delegated_name(name: str, arity: int) -> str:
    return "__sq_arrow_2" if name == "->>" else f"__sq_{name}_{arity}"


def register(conn: Any) -> None:
    """Install the Python functions (SQLite's, asked of sqlite3) on a DuckDB connection, when it opens. Not left
    for later: a function created inside a transaction that rolls back can never be created again on that
    connection (DuckDB's Python module keeps its name). The macros are created as statements name them
    (`macros_named`)."""
    udfs.register(conn)
    json_table.register(conn)
    for name in DELEGATED:
        arities = [2] if name == "->>" else range(1, MAX_DELEGATED_ARGS + 1)
        for arity in arities:
            udfs.create_function(  # constant-folded: one 'now' per statement, as SQLite has it
                conn, delegated_name(name, arity), _delegate(_sqlite_call(name, arity), arity), ["VARIANT"] * arity,
                "VARIANT",
            )


_MACRO_NAME = re.compile(r"CREATE OR REPLACE TEMP MACRO (__sq_\w+)\(")
_ENGINE_NAME = re.compile(r"__sq_\w+")
# name -> its CREATE statement: the dialect's macros (these modules' and udfs') that translated SQL may call
MACRO_TEXTS: dict[str, str] = {_MACRO_NAME.match(text).group(1): text  # type: ignore[union-attr]
                               for text in (*udfs.MACROS, *MACROS)}
_KEPT_TEXT_CHARS = 8192


def macros_named(sql: str) -> tuple[str, ...]:
    """The macros `sql` needs, each after the macros its own body calls (DuckDB binds a macro's body when it is
    created): those it names and theirs."""
    if "__sq_" not in sql:
        return ()
    return _macros_named(sql) if len(sql) <= _KEPT_TEXT_CHARS else _ordered(frozenset(_ENGINE_NAME.findall(sql)))


@lru_cache(maxsize=4096)
def _macros_named(sql: str) -> tuple[str, ...]:
    return _ordered(frozenset(_ENGINE_NAME.findall(sql)))


@lru_cache(maxsize=512)
def _ordered(names: frozenset[str]) -> tuple[str, ...]:
    out: list[str] = []

    def visit(name: str) -> None:
        if name in out or name not in MACRO_TEXTS:
            return
        for used in sorted(set(_ENGINE_NAME.findall(MACRO_TEXTS[name])) - {name}):
            visit(used)
        out.append(name)

    for name in sorted(names):
        visit(name)
    return tuple(out)
