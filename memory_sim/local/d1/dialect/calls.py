"""SQLite's functions and CAST on DuckDB. Aggregates and window functions run natively, on values whose type is
known (sum() over INTEGERs checks overflow as SQLite does); a few hot scalar functions run natively where
DuckDB's answer is SQLite's for the argument types at hand (ASCII-only upper/lower, length, abs, coalesce,
nullif, iif, typeof); every other scalar function is answered by sqlite3 itself, row by row, with nested calls
kept in one expression so JSON stays JSON. What has no exact form here is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect import values as sv
from memory_sim.local.d1.dialect.ast import AGGREGATES, Call, Cast, Lit, Node, aggregates
from memory_sim.local.d1.dialect.compare import compare
from memory_sim.local.d1.dialect.operands import Typed, literal
from memory_sim.local.d1.dialect.udfs import failure, refusal

if TYPE_CHECKING:
    from memory_sim.local.d1.dialect.typed import Expressions

WINDOW_ONLY = {"row_number": "int", "rank": "int", "dense_rank": "int", "ntile": "int", "percent_rank": "real",
               "cume_dist": "real", "lag": "", "lead": "", "first_value": "", "last_value": "", "nth_value": ""}
_REFUSED = {
    "random": "random() on the DuckDB engine; generate random values in the application and bind them",
    "randomblob": "randomblob() on the DuckDB engine; generate random bytes in the application and bind them",
    "json_group_array": "json_group_array() on the DuckDB engine; build the array in the application",
    "json_group_object": "json_group_object() on the DuckDB engine; build the object in the application",
    "load_extension": "load_extension() is not available in D1",
}
_TIME = frozenset({"date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff"})
_OVERFLOW = failure("SQLITE_ERROR", "integer overflow")
_PARTIAL = refusal(
    "sum() of INTEGERs whose total fits in 64 bits but whose positive (or negative) values alone do not: SQLite "
    "fails with integer overflow if a partial sum leaves 64 bits in the order it reads the rows, an order the "
    "DuckDB engine cannot reproduce; CAST the argument AS REAL, or use total()"
)
_I64_MAX, _I64_MIN = "9223372036854775807", "-9223372036854775808"


def call(ex: Expressions, node: Call) -> Typed:
    name = node.name
    if name in _REFUSED:
        raise D1Unsupported(_REFUSED[name])
    if node.over is not None or name in WINDOW_ONLY:
        return _window(ex, node)
    if name in AGGREGATES and (name not in ("max", "min") or len(node.args) == 1):
        return _aggregate(ex, node, "")
    if node.filter is not None or node.distinct:
        raise D1Unsupported(f"{name}() with DISTINCT or FILTER, which only aggregates take")
    if name in ("last_insert_rowid", "changes", "total_changes"):
        mark = ex.ctx.extra({"last_insert_rowid": "last_rowid"}.get(name, name))
        return Typed(f"CAST({mark} AS BIGINT)", "int")
    if name in ("coalesce", "ifnull"):
        node = _short_circuit(ex, node)
        if len(node.args) == 1:
            return ex.emit(node.args[0])
    native = _NATIVE.get(name)
    if native is not None:
        args = [ex.emit(a) for a in node.args]
        done = native(ex, args)
        if done is not None:
            return done
    return delegated(ex, node)


# --- aggregates and windows -----------------------------------------------------------------------------------
def _aggregate(ex: Expressions, node: Call, over: str) -> Typed:
    name = node.name
    where = f" FILTER (WHERE {ex.condition(node.filter)})" if node.filter is not None else ""
    distinct = "DISTINCT " if node.distinct else ""
    if node.star:
        return Typed(f"count(*){where}{over}", "int")
    args = [ex.emit(a) for a in node.args]
    x = args[0]
    if x.t == "bool":
        x = Typed(f"CAST({x.sql} AS BIGINT)", "int")
    def agg(fn: str, sql: str) -> str:
        return f"{fn}({distinct}{sql}){where}{over}"
    if name == "count":
        if node.distinct:
            _plain_values(x, "count(DISTINCT ...)")
        return Typed(agg("count", x.sql), "int")
    if name == "group_concat":
        if node.distinct:
            raise D1Unsupported(
                "group_concat(DISTINCT ...) on the DuckDB engine: SQLite joins the values in the order it reads them, "
                "which DuckDB's DISTINCT does not keep; join them in the application"
            )
        sep = ex.text(args[1]).sql if len(args) > 1 else "','"
        return Typed(f"string_agg({distinct}{ex.text(x).sql}, coalesce({sep}, '')){where}{over}", "text")
    if x.t in ("text", "blob", "any", "dyn") and name in ("avg", "total"):
        if node.distinct:  # SQLite drops repeats of the values ('3' and '3.0' are two), then reads them as numbers
            raise D1Unsupported(f"{name}(DISTINCT ...) over values that are not all numbers on the DuckDB engine: "
                                "CAST the argument AS REAL or AS INTEGER")
        x = _to_real(ex, x)  # SQLite reads each value as a number (text by its numeric prefix), summed as REALs
    if x.t in ("text", "blob", "any", "dyn") and name == "sum":
        raise D1Unsupported(
            "sum() over values that are not all numbers (TEXT, BLOB or of unknown type) on the DuckDB engine: "
            "SQLite's result is an INTEGER or a REAL depending on the values; CAST the argument AS INTEGER or AS REAL"
        )
    if name in ("min", "max") and x.t in ("any", "dyn"):
        v = x.sql if x.t == "dyn" else f"CAST({x.sql} AS VARIANT)"
        key = "{" + ", ".join(f"'{k}': __sq_sk_{k}({v})" for k in ("class", "num", "int", "text", "blob")) + "}"
        keep = f" FILTER (WHERE {v} IS NOT NULL" + (
            f" AND {ex.condition(node.filter)})" if node.filter is not None else ")"
        )
        if node.distinct or over:
            raise D1Unsupported(
                f"{name}(DISTINCT ...) or {name}() OVER over values of mixed types on the DuckDB engine"
            )
        return Typed(f"arg_{name}({v}, {key}){keep}", "dyn")  # SQLite's order of mixed types, by sort keys
    if name in ("min", "max"):
        _plain_values(x, f"{name}()")
        return Typed(agg(name, x.sql), x.t)
    if name == "avg":
        return Typed(agg("avg", x.sql), "real" if x.t != "null" else "null")
    if name == "total":
        return Typed(f"coalesce(CAST({agg('sum', x.sql)} AS DOUBLE), 0.0)", "real")
    if x.t == "int":
        # SQLite fails when a partial sum, in the order it reads the rows, leaves 64 bits, even if the total fits.
        # The total out of range fails in every order; within range, the order decides unless the positive values
        # (and the negative ones) sum within range too, and DuckDB's order is not SQLite's: refused.
        s = agg("sum", x.sql)
        above = agg("sum", f"CASE WHEN {x.sql} > 0 THEN {x.sql} END")
        below = agg("sum", f"CASE WHEN {x.sql} < 0 THEN {x.sql} END")
        check = f"{s} > {_I64_MAX} OR {s} < {_I64_MIN}"
        partial = f"{above} > {_I64_MAX} OR {below} < {_I64_MIN}"
        return Typed(f"(CASE WHEN {check} THEN error('{_OVERFLOW}') WHEN {partial} THEN error('{_PARTIAL}') "
                     f"ELSE CAST({s} AS BIGINT) END)", "int")
    if x.t == "num":
        raise D1Unsupported("sum() over numbers of mixed kinds on the DuckDB engine; CAST the argument AS REAL")
    return Typed(agg("sum", x.sql), x.t)


def _plain_values(x: Typed, what: str) -> None:
    if x.t in ("any", "dyn"):
        raise D1Unsupported(
            f"{what} over values of mixed or unknown types on the DuckDB engine: SQLite orders numbers, text and "
            "blobs together; CAST the argument to one type"
        )
    if x.t == "text" and (x.coll or x.col_coll) in ("NOCASE", "RTRIM"):
        raise D1Unsupported(f"{what} over a {x.coll or x.col_coll} column on the DuckDB engine; use lower() or rtrim()")


def _window(ex: Expressions, node: Call) -> Typed:
    over = f" OVER {ex.ctx.window(node.over)}" if node.over is not None else ""
    if node.name in AGGREGATES and (node.name not in ("max", "min") or len(node.args) == 1):
        return _aggregate(ex, node, over)
    kind = WINDOW_ONLY.get(node.name)
    if kind is None:
        raise D1Unsupported(f"{node.name}() as a window function on the DuckDB engine")
    args = [ex.emit(a) for a in node.args]
    if kind:
        return Typed(f"{node.name}({', '.join(a.sql for a in args)}){over}", kind)
    if node.name in ("lag", "lead") and len(args) == 3:
        sqls, t = ex.unify([args[0], args[2]])
        return Typed(f"{node.name}({sqls[0]}, {args[1].sql}, {sqls[1]}){over}", t)
    first = args[0] if args else literal(None)
    rest = "".join(f", {a.sql}" for a in args[1:])
    return Typed(f"{node.name}({first.sql}{rest}){over}", first.t if first.t != "bool" else "int")


# --- native scalar functions ------------------------------------------------------------------------------------
def _upper_lower(which: str) -> Callable[[Expressions, list[Typed]], Typed | None]:
    def emit(ex: Expressions, args: list[Typed]) -> Typed | None:
        x = args[0]
        if x.t not in ("text", "int", "null", "bool"):
            return None
        return Typed(f"__sq_{which}({ex.text(x).sql})", "text")  # ASCII letters only, as SQLite without ICU

    return emit


def _length(ex: Expressions, args: list[Typed]) -> Typed | None:
    x = args[0]
    if x.t == "text" and x.known and "\x00" not in (x.const or ""):
        return literal(None if x.const is None else len(x.const))
    if x.t == "blob":
        return Typed(f"octet_length({x.sql})", "int")
    if x.t in ("int", "null"):
        return Typed(f"length({ex.text(x).sql})", "int")
    return None  # text may hold NUL, where SQLite stops counting: asked of sqlite3


def _abs(ex: Expressions, args: list[Typed]) -> Typed | None:
    x = args[0]
    return Typed(f"abs({x.sql})", x.t) if x.t in ("int", "real") else None


def _short_circuit(ex: Expressions, node: Call) -> Call:
    """coalesce() without the arguments after a constant that is not NULL: SQLite never reads them (a column
    there, outside GROUP BY, is then no bare column). Not where they hold an aggregate, which makes the query one."""
    for n, arg in enumerate(node.args[:-1]):
        value = ex.emit(arg)
        if value.known and value.const is not None:
            return node if aggregates(node.args[n + 1:]) else Call(node.name, node.args[: n + 1])
    return node


def _coalesce(ex: Expressions, args: list[Typed]) -> Typed | None:
    if len(args) < 2:
        return None
    sqls, t = ex.unify(args)
    return Typed(f"coalesce({', '.join(sqls)})", t)


def _nullif(ex: Expressions, args: list[Typed]) -> Typed | None:
    a, b = args
    if a.t not in ("int", "real", "text", "blob") or "text" in (a.t, b.t) and (a.coll or b.coll or a.col_coll
                                                                                or b.col_coll):
        return None
    if a.t == b.t:
        return Typed(f"nullif({a.sql}, {b.sql})", a.t)
    # Of another type: the answer is still `a` or NULL, of a's type. A function's arguments have no affinity, so
    # the comparison converts neither side.
    equal = compare(ex, "=", replace(a, aff=""), replace(b, aff=""))
    return Typed(f"(CASE WHEN {equal.sql} THEN NULL ELSE {a.sql} END)", a.t)


def _iif(ex: Expressions, args: list[Typed]) -> Typed | None:
    if len(args) != 3:
        return None
    sqls, t = ex.unify(args[1:])
    return Typed(f"(CASE WHEN {ex.truth(args[0]).sql} THEN {sqls[0]} ELSE {sqls[1]} END)", t)


def _typeof(ex: Expressions, args: list[Typed]) -> Typed | None:
    x = args[0]
    name = {"int": "integer", "bool": "integer", "real": "real", "text": "text", "blob": "blob"}.get(x.t)
    if x.t == "null":
        return literal("null")
    if name is None:
        return Typed(f"__sq_typeof({x.sql})", "text")
    return Typed(f"(CASE WHEN {x.sql} IS NULL THEN 'null' ELSE '{name}' END)", "text")


def _identity(ex: Expressions, args: list[Typed]) -> Typed | None:
    x = args[0]  # likely(), unlikely(), likelihood(): hints to SQLite's planner; a call, so no column affinity
    return Typed(x.sql, x.t, "", x.coll, x.col_coll, x.const, x.param)


def _minmax(which: str) -> Callable[[Expressions, list[Typed]], Typed | None]:
    def emit(ex: Expressions, args: list[Typed]) -> Typed | None:
        kinds = {a.t for a in args}
        if len(kinds) != 1 or kinds & {"any", "dyn", "num", "null", "bool"} or len(args) > 4:
            return None
        if "text" in kinds and any(a.coll or a.col_coll for a in args):
            return None
        return Typed(f"__sq_{which}({', '.join(a.sql for a in args)})", kinds.pop())

    return emit


_NATIVE: dict[str, Callable[[Expressions, list[Typed]], Typed | None]] = {
    "upper": _upper_lower("upper"), "lower": _upper_lower("lower"), "length": _length, "abs": _abs,
    "coalesce": _coalesce, "ifnull": _coalesce, "nullif": _nullif, "iif": _iif, "typeof": _typeof,
    "likely": _identity, "unlikely": _identity, "likelihood": _identity, "max": _minmax("max"), "min": _minmax("min"),
}


# --- everything else: sqlite3 answers ------------------------------------------------------------------------------
def delegated(ex: Expressions, node: Call) -> Typed:
    """The call (with nested calls of delegable functions kept inside it) evaluated by sqlite3 per row."""
    args: list[Typed] = []
    template = "SELECT " + _inline(ex, node, args)
    if node.name in _TIME or _mentions_time(node):
        values = "".join(f", CAST({a.sql} AS VARIANT)" for a in args)
        sql = f"__sq_eval_{len(args)}('" + template.replace("'", "''") + f"'{values})"
        return Typed(sql, "dyn")  # never folded here: 'now' is each statement's own (DuckDB folds per run)
    return ex.delegate(template, args)


def _inline(ex: Expressions, node: Node, args: list[Typed]) -> str:
    if isinstance(node, Call) and _delegable(node):
        inner = ", ".join(_inline(ex, a, args) for a in node.args)
        return f"{node.name}({'*' if node.star else inner})"
    if isinstance(node, Lit) and node.kind in ("int", "real", "text", "null"):
        return _sqlite_literal(node)
    if isinstance(node, Cast):
        return f"CAST({_inline(ex, node.operand, args)} AS {node.type_name})"
    args.append(ex.emit(node))
    return f"?{len(args)}"


def _delegable(node: Call) -> bool:
    return (node.name not in AGGREGATES or node.name in ("max", "min") and len(node.args) > 1) and not (
        node.name in _REFUSED or node.name in WINDOW_ONLY or node.over is not None or node.filter is not None
        or node.distinct or node.name in ("last_insert_rowid", "changes", "total_changes")
    )


def _mentions_time(node: Node) -> bool:
    return isinstance(node, Call) and (node.name in _TIME or any(_mentions_time(a) for a in node.args))


def _sqlite_literal(node: Lit) -> str:
    if node.kind == "null":
        return "NULL"
    if node.kind == "text":
        return "'" + str(node.value).replace("'", "''") + "'"
    return repr(node.value) if node.kind == "real" else str(node.value)


# --- CAST ---------------------------------------------------------------------------------------------------------
def cast(ex: Expressions, e: Typed, type_name: str) -> Typed:
    aff = sv.affinity(type_name)
    if e.known and e.const is None:
        return Typed("NULL", "null", aff=aff, const=None)
    done = _CASTS[aff](ex, e)
    return Typed(done.sql, done.t, aff=aff, const=done.const)


def _to_integer(ex: Expressions, e: Typed) -> Typed:
    if e.t == "int":
        return e
    if e.known:
        return literal(sv.cast_integer(e.const))
    if e.t == "bool":
        return Typed(f"CAST({e.sql} AS BIGINT)", "int")
    if e.t == "real":
        return Typed(f"__sq_real_int({e.sql})", "int")
    if e.t == "text" and e.param:
        return ex.param_extra("int", e, "i")
    return ex.delegate("SELECT CAST(?1 AS INTEGER)", [e], "int", "BIGINT")


def _to_real(ex: Expressions, e: Typed) -> Typed:
    if e.t == "real":
        return e
    if e.known:
        return literal(sv.cast_real(e.const))
    if e.t in ("int", "bool"):
        return Typed(f"CAST({e.sql} AS DOUBLE)", "real")
    if e.t == "text" and e.param:
        return ex.param_extra("real", e, "r")
    return ex.delegate("SELECT CAST(?1 AS REAL)", [e], "real", "DOUBLE")


def _to_blob(ex: Expressions, e: Typed) -> Typed:
    if e.t in ("blob", "null"):
        return e
    if e.known:
        return literal(sv.as_text(e.const).encode())  # type: ignore[union-attr]
    if e.t in ("text", "int", "bool"):
        return Typed(f"encode({ex.text(e).sql})", "blob")
    return ex.delegate("SELECT CAST(?1 AS BLOB)", [e], "blob", "BLOB")


def _to_numeric(ex: Expressions, e: Typed) -> Typed:
    if e.t in ("int", "real", "null"):
        return e
    if e.known:
        return literal(sv.cast_numeric(e.const))
    if e.t == "bool":
        return Typed(f"CAST({e.sql} AS BIGINT)", "int")
    return ex.delegate("SELECT CAST(?1 AS NUMERIC)", [e])


_CASTS: dict[str, Callable[[Expressions, Typed], Typed]] = {
    "INTEGER": _to_integer, "REAL": _to_real, "TEXT": lambda ex, e: ex.text(e), "BLOB": _to_blob,
    "NUMERIC": _to_numeric,
}
