"""What the typed emitter (typed.py) calls inside DuckDB to keep SQLite's meaning where DuckDB's static types
cannot: Python functions that ask sqlite3 itself (exact by construction, one call per row, used where values of
several types meet), and macros for the few cases native SQL answers exactly (an INTEGER against a REAL, ASCII
case folding, sort keys for mixed types, sum() overflow).

Failures cross DuckDB inside markers the engine maps back (duckdb_errors.py): `[[d1:<SQLITE_CODE>|<message>]]`
for an error SQLite itself raises, `[[d1-unsupported:<message>]]` for a refusal.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from functools import cache
from typing import Any

from memory_sim.bindings.limits import D1_MAX_STRING_OR_BLOB_BYTES
from memory_sim.local.d1.dialect import values as sv

MAX_EVAL_ARGS = 8
_INTS = "'INT8','INT16','INT32','INT64','UINT8','UINT16','UINT32','UINT64','BOOL_TRUE','BOOL_FALSE'"
_NUMS = _INTS + ",'DOUBLE','FLOAT'"
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = _UPPER.lower()
_TOP = "9223372036854775808.0"  # 2^63 as a DOUBLE: no INTEGER reaches it


def failure(code: str, message: str) -> str:
    return f"[[d1:{code}|{message}]]"


def refusal(message: str) -> str:
    return f"[[d1-unsupported:{message}]]"


TOO_BIG = failure("SQLITE_TOOBIG", "string or blob too big")  # D1's 2,000,000-byte limit, in SQLite's words


def too_big(value: str | bytes) -> bool:
    """Over D1's limit on a string or blob (a string's UTF-8 bytes; len() is a cheap lower bound of them)."""
    limit = D1_MAX_STRING_OR_BLOB_BYTES
    if isinstance(value, bytes):
        return len(value) > limit
    return len(value) > limit or (4 * len(value) > limit and len(value.encode("utf-8", "surrogatepass")) > limit)


class SqliteFailure(Exception):
    """Raised inside a DuckDB UDF; its text carries SQLite's code and message (or a refusal) across DuckDB."""


class _Oracle:
    """One sandboxed in-memory sqlite3 per thread (DuckDB calls Python functions from its worker threads)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            from memory_sim.local.d1.sqlite_sandbox import Sandbox

            conn = self._local.conn = sqlite3.connect(":memory:", check_same_thread=False)
            conn.text_factory = _text
            Sandbox(conn)
        return conn

    def value(self, sql: str, args: tuple[Any, ...]) -> Any:
        try:
            row = self.conn().execute(sql, args).fetchone()
        except sqlite3.Error as exc:
            name = getattr(exc, "sqlite_errorname", None) or "SQLITE_ERROR"
            raise SqliteFailure(failure(primary_code(name), str(exc))) from None
        return None if row is None else row[0]


ORACLE = _Oracle()


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SqliteFailure(refusal(
            "a text that is not valid UTF-8 (a BLOB read as TEXT): SQLite keeps its bytes, a DuckDB text cannot; "
            "keep the value a BLOB (hex() shows it as text)"
        )) from None  # the same words as typed.NOT_UTF8


def primary_code(name: str) -> str:
    """SQLITE_CONSTRAINT_UNIQUE -> SQLITE_CONSTRAINT: D1 reports the primary result code."""
    return "_".join(name.split("_")[:2])


def plain(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float, str, bytes)) or value is None:
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return str(value)


def evaluate(sql: str, *args: Any) -> Any:
    """`sql` (one SELECT of numbered parameters) on sqlite3: SQLite's answer, with SQLite's type."""
    return ORACLE.value(sql, tuple(plain(a) for a in args))


def _eval_function(arity: int) -> Callable[..., Any]:
    """DuckDB reads a Python function's arity from its signature: one per arity."""
    makers: dict[int, Callable[..., Any]] = {
        0: lambda s: evaluate(s),
        1: lambda s, a: evaluate(s, a),
        2: lambda s, a, b: evaluate(s, a, b),
        3: lambda s, a, b, c: evaluate(s, a, b, c),
        4: lambda s, a, b, c, d: evaluate(s, a, b, c, d),
        5: lambda s, a, b, c, d, e: evaluate(s, a, b, c, d, e),
        6: lambda s, a, b, c, d, e, f: evaluate(s, a, b, c, d, e, f),
        7: lambda s, a, b, c, d, e, f, g: evaluate(s, a, b, c, d, e, f, g),
        8: lambda s, a, b, c, d, e, f, g, h: evaluate(s, a, b, c, d, e, f, g, h),
    }
    return makers[arity]


_ORDER_OPS: dict[str, Callable[[int], bool]] = {
    "=": lambda o: o == 0, "<>": lambda o: o != 0, "<": lambda o: o < 0, "<=": lambda o: o <= 0,
    ">": lambda o: o > 0, ">=": lambda o: o >= 0,
}
def compare(op: str, a: Any, b: Any, left: str, right: str, collation: str) -> bool | None:
    """A comparison as SQLite makes it: affinities (`?` where the engine could not tell a column's), then the
    storage-class order. Refused where an unknown affinity would decide the answer."""
    a, b = plain(a), plain(b)
    if op in ("IS", "IS NOT"):
        if a is None or b is None:
            same = a is None and b is None
            return same if op == "IS" else not same
        order = _order(a, b, left, right, collation)
        return (order == 0) if op == "IS" else (order != 0)
    if a is None or b is None:
        return None
    return _ORDER_OPS[op](_order(a, b, left, right, collation))


def _order(a: Any, b: Any, left: str, right: str, collation: str) -> int:
    """The order of two values with these affinities; an unknown one ("?") may be any: answered where every
    choice gives the same order, refused where the choice would decide."""
    choices = ("", "INTEGER", "TEXT", "BLOB")
    orders = {
        _order_known(a, b, la, ra, collation)
        for la in (choices if left == "?" else (left,))
        for ra in (choices if right == "?" else (right,))
    }
    if len(orders) > 1:
        raise SqliteFailure(refusal(
            "a comparison whose answer depends on the affinity of a column of a subquery, CTE or view, which the "
            "DuckDB engine cannot tell: SQLite may convert either side; CAST one side AS INTEGER, REAL or TEXT"
        ))
    return orders.pop()


def _order_known(a: Any, b: Any, left: str, right: str, collation: str) -> int:
    fa, fb = sv.comparison_affinity(left, right)
    order = sv.compare(sv.apply_affinity(a, fa), sv.apply_affinity(b, fb), collation)
    assert order is not None
    return order


def store(value: Any, aff: str, duck_type: str, where: str) -> Any:
    """The value a column keeps (SQLite's storage affinity), or a refusal where the DuckDB column, which holds one
    type, cannot keep what SQLite would."""
    kept = sv.stored(plain(value), aff)
    if kept is None:
        return None
    if isinstance(kept, (str, bytes)) and too_big(kept):
        raise SqliteFailure(TOO_BIG)
    fits = {"BIGINT": int, "DOUBLE": float, "VARCHAR": str, "BLOB": bytes}.get(duck_type, object)
    if isinstance(kept, fits):
        return kept
    raise SqliteFailure(refusal(store_refusal(kept, aff, where)))


def store_refusal(kept: Any, aff: str, where: str) -> str:
    shown = repr(kept if not isinstance(kept, bytes) else kept.hex())
    return (
        f"{sv.storage_class(kept).upper()} value {shown[:40]} in {aff} column {where}: SQLite keeps it as "
        f"{sv.storage_class(kept).upper()}, a DuckDB column holds one type; store a value of the column's type "
        "or declare the column with the type you store"
    )


def _ir(op: str, *, above: str, below: str, at: str) -> str:
    """An INTEGER i against a REAL r, exactly (DuckDB would round i to a DOUBLE): beyond the 64-bit range the
    answer is fixed; inside, compare i with the integer just at or beside r."""
    return (
        f"CREATE OR REPLACE TEMP MACRO __sq_{op}_ir(i, r) AS CASE WHEN i IS NULL OR r IS NULL THEN NULL "
        f"WHEN r >= {_TOP} THEN {above} WHEN r < -{_TOP} THEN {below} ELSE {at} END"
    )


MACROS = (
    # D1's limit on computed text and blobs written into a column (bound values are checked when bound)
    f"CREATE OR REPLACE TEMP MACRO __sq_fit_text(x) AS CASE WHEN strlen(x) > {D1_MAX_STRING_OR_BLOB_BYTES} "
    f"THEN error('{TOO_BIG}') ELSE x END",
    f"CREATE OR REPLACE TEMP MACRO __sq_fit_blob(x) AS CASE WHEN octet_length(x) > {D1_MAX_STRING_OR_BLOB_BYTES} "
    f"THEN error('{TOO_BIG}') ELSE x END",
    _ir("lt", above="true", below="false", at="i < CAST(ceil(r) AS BIGINT)"),
    _ir("le", above="true", below="false", at="i <= CAST(floor(r) AS BIGINT)"),
    _ir("gt", above="false", below="true", at="i > CAST(floor(r) AS BIGINT)"),
    _ir("ge", above="false", below="true", at="i >= CAST(ceil(r) AS BIGINT)"),
    _ir("eq", above="false", below="false", at="r = floor(r) AND i = CAST(r AS BIGINT)"),
    _ir("ne", above="true", below="true", at="NOT (r = floor(r) AND i = CAST(r AS BIGINT))"),
    "CREATE OR REPLACE TEMP MACRO __sq_is_ir(i, r) AS CASE WHEN i IS NULL OR r IS NULL THEN i IS NULL AND r IS NULL "
    "ELSE __sq_eq_ir(i, r) END",
    "CREATE OR REPLACE TEMP MACRO __sq_isnot_ir(i, r) AS NOT __sq_is_ir(i, r)",
    "CREATE OR REPLACE TEMP MACRO __sq_real_int(r) AS CASE WHEN r IS NULL THEN NULL "
    f"WHEN r >= {_TOP} THEN 9223372036854775807 WHEN r < -{_TOP} THEN -9223372036854775808 "
    "ELSE CAST(trunc(r) AS BIGINT) END",
    f"CREATE OR REPLACE TEMP MACRO __sq_nocase(x) AS translate(x, '{_UPPER}', '{_LOWER}')",
    f"CREATE OR REPLACE TEMP MACRO __sq_upper(x) AS translate(x, '{_LOWER}', '{_UPPER}')",
    f"CREATE OR REPLACE TEMP MACRO __sq_lower(x) AS translate(x, '{_UPPER}', '{_LOWER}')",
    "CREATE OR REPLACE TEMP MACRO __sq_sum_int(x) AS CASE WHEN sum(x) > 9223372036854775807 OR "
    f"sum(x) < -9223372036854775808 THEN error('{failure('SQLITE_ERROR', 'integer overflow')}') "
    "ELSE CAST(sum(x) AS BIGINT) END",
    # a REAL into an INTEGER column: SQLite keeps a whole number as an INTEGER, anything else as a REAL
    "CREATE OR REPLACE TEMP MACRO __sq_whole(x, message) AS CASE WHEN x IS NULL THEN NULL "
    f"WHEN x = floor(x) AND x > -{_TOP} AND x < {_TOP} THEN CAST(x AS BIGINT) "
    "ELSE error(message) END",
    # a result value of mixed type, leaving DuckDB as typed fields (duckdb_engine.py decodes them)
    "CREATE OR REPLACE TEMP MACRO __sq_out(x) AS {"
    f"'t': variant_typeof(x), 'i': CASE WHEN variant_typeof(x) IN ({_INTS}) THEN TRY_CAST(x AS BIGINT) END, "
    "'f': CASE WHEN variant_typeof(x) IN ('DOUBLE', 'FLOAT') THEN TRY_CAST(x AS DOUBLE) END, "
    "'s': CASE WHEN variant_typeof(x) = 'VARCHAR' THEN TRY_CAST(x AS VARCHAR) END, "
    "'b': CASE WHEN variant_typeof(x) = 'BLOB' THEN TRY_CAST(x AS BLOB) END}",
    # sort keys for values of mixed types (VARIANT): class, number, exact tie-break of large integers, text, blob
    "CREATE OR REPLACE TEMP MACRO __sq_sk_class(x) AS CASE WHEN x IS NULL THEN 0 "
    f"WHEN variant_typeof(x) IN ({_NUMS}) THEN 1 WHEN variant_typeof(x) = 'VARCHAR' THEN 2 ELSE 3 END",
    f"CREATE OR REPLACE TEMP MACRO __sq_sk_num(x) AS CASE WHEN variant_typeof(x) IN ({_NUMS}) "
    "THEN TRY_CAST(x AS DOUBLE) END",
    f"CREATE OR REPLACE TEMP MACRO __sq_sk_int(x) AS CASE WHEN variant_typeof(x) IN ({_INTS}) "
    "THEN CAST(TRY_CAST(x AS BIGINT) AS HUGEINT) - CAST(CAST(TRY_CAST(x AS BIGINT) AS DOUBLE) AS HUGEINT) ELSE 0 END",
    "CREATE OR REPLACE TEMP MACRO __sq_sk_text(x) AS CASE WHEN variant_typeof(x) = 'VARCHAR' "
    "THEN TRY_CAST(x AS VARCHAR) END",
    "CREATE OR REPLACE TEMP MACRO __sq_sk_blob(x) AS CASE WHEN variant_typeof(x) = 'BLOB' THEN TRY_CAST(x AS BLOB) END",
)


OUT_TYPE = "STRUCT(t VARCHAR, i BIGINT, f DOUBLE, s VARCHAR, b BLOB)"


def decode(value: Any) -> Any:
    """A value written by __sq_out, back as SQLite's."""
    if value is None:
        return None
    kind = value["t"]
    if kind in ("DOUBLE", "FLOAT"):
        return value["f"]
    if kind == "VARCHAR":
        return value["s"]
    if kind == "BLOB":
        return value["b"]
    return value["i"]


def create_function(conn: Any, name: str, function: Callable[..., Any], params: list[str], result: str) -> None:
    """A Python function on a DuckDB connection, NULLs passed to it, constant-folded (one 'now' per statement, as in
    SQLite). The types go as DuckDB's type objects, made once: given as text, each is parsed again on every call
    (half of registering the dialect's 58 functions at each open: 14 -> 7 ms)."""
    conn.create_function(name, function, [_sql_type(p) for p in params], _sql_type(result),
                         null_handling="special", side_effects=False)


@cache
def _sql_type(name: str) -> Any:
    import duckdb

    return duckdb.sqltype(name)


def register(conn: Any) -> None:
    """Install the Python functions on a DuckDB connection (the MACROS are created as statements name them:
    functions.macros_named)."""
    for arity in range(MAX_EVAL_ARGS + 1):
        create_function(conn, f"__sq_eval_{arity}", _eval_function(arity), ["VARCHAR"] + ["VARIANT"] * arity,
                        "VARIANT")
    create_function(conn, "__sq_compare", compare, ["VARCHAR", "VARIANT", "VARIANT", "VARCHAR", "VARCHAR", "VARCHAR"],
                    "BOOLEAN")
    create_function(conn, "__sq_store", store, ["VARIANT", "VARCHAR", "VARCHAR", "VARCHAR"], "VARIANT")
