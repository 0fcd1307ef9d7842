"""Comparisons with SQLite's meaning on DuckDB (`'3' = 3` is false, an INTEGER column compared with '3' is true):
affinity first (sqlite3CompareAffinity: a column's numeric affinity converts a well-formed numeric text, a TEXT
column's affinity turns a number into text), then SQLite's order of storage classes (NULL < numbers < text <
blobs), numbers exactly (an INTEGER against a REAL too), text by collation (BINARY, NOCASE, RTRIM). LIKE, GLOB and
IN build on them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect import values as sv
from memory_sim.local.d1.dialect.ast import InList, InSelect, Like
from memory_sim.local.d1.dialect.operands import FLIP, IR, RANK, TWO63, Typed, bare_int, boolean, literal, null_beside

if TYPE_CHECKING:
    from memory_sim.local.d1.dialect.typed import Expressions

_NATIVE = {"=": "=", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "IS": "IS NOT DISTINCT FROM",
           "IS NOT": "IS DISTINCT FROM"}
_ORDER = {"=": lambda o: o == 0, "<>": lambda o: o != 0, "<": lambda o: o < 0, "<=": lambda o: o <= 0,
          ">": lambda o: o > 0, ">=": lambda o: o >= 0, "IS": lambda o: o == 0, "IS NOT": lambda o: o != 0}
_NUMERIC_AFF = ("INTEGER", "REAL", "NUMERIC")
_GLOB_SPECIAL = set("\\.^$|?*+()[]{}")


def compare(ex: Expressions, op: str, a: Typed, b: Typed) -> Typed:
    a, b = _int_view(_null_view(a)), _int_view(_null_view(b))
    coll = a.coll or b.coll or a.col_coll or b.col_coll or "BINARY"
    if a.t == "null" or b.t == "null":
        if a.may_fail or b.may_fail:  # SQLite still evaluates the other operand, and its error
            return dynamic(op, a, b, coll)
        return _with_null(op, a, b)
    text_equal = _text_equal(op, a, b, coll)
    if text_equal is not None:
        return text_equal
    if "?" in (a.cls, b.cls) or ("?" in (a.aff, b.aff) and (a.cls != b.cls or a.cls == "t")):
        return dynamic(op, a, b, coll)  # types or affinities only each row tells
    chosen, _ = sv.comparison_affinity(a.aff, b.aff)
    if chosen in _NUMERIC_AFF:
        x, y = _numeric_side(ex, a), _numeric_side(ex, b)
        if x is None or y is None:
            return dynamic(op, a, b, coll)
        a, b = x, y
    elif chosen == "TEXT":
        a, b = (ex.text(a) if a.cls == "n" else a), (ex.text(b) if b.cls == "n" else b)
    if a.cls == b.cls:
        return _same_class(op, a, b, coll)
    return _class_order(op, a, b)


def _text_equal(op: str, a: Typed, b: Typed, coll: str) -> Typed | None:
    """A value of mixed type = a text, where neither side converts (no affinity, or both columns' and not
    numeric): equal only where the value is a text, and then bytewise. Written natively, so DuckDB can join on it
    (a table's TEXT key = json_each's key) instead of asking sqlite3 for every pair."""
    if op != "=" or coll != "BINARY" or a.may_fail or b.may_fail:
        return None
    mixed, text = (a, b) if a.t == "dyn" else (b, a)
    if mixed.t != "dyn" or text.t != "text" or "?" in (mixed.aff, text.aff):
        return None
    if sv.comparison_affinity(mixed.aff, text.aff)[0] not in ("", "BLOB"):
        return None
    x, kind = mixed.sql, f"variant_typeof({mixed.sql})"
    joined = f"({text.sql} = CASE WHEN {kind} = 'VARCHAR' THEN CAST({x} AS VARCHAR) END)"  # NULL where not a text
    unknown = f"{x} IS NULL OR {kind} = 'VARIANT_NULL' OR {text.sql} IS NULL"
    exact = f"CASE WHEN {unknown} THEN NULL ELSE {kind} = 'VARCHAR' END"
    return Typed(f"({joined} AND {exact})", "bool")  # NULL AND false is false: a number is not equal, not unknown


def _numeric_side(ex: Expressions, e: Typed) -> Typed | None:
    """An operand under numeric affinity: a text becomes a number where it reads as one; None where that depends
    on each row. A column of numeric affinity holds no such text (it was converted when stored)."""
    if e.cls != "t" or e.aff in _NUMERIC_AFF:
        return e
    if e.known:
        number = sv.numeric_affinity(e.const)
        return e if number is None else literal(number)
    if e.param:
        cls = ex.ctx.param_class(e.param)[1]
        return e if cls == "t" else ex.param_extra("aff", e, cls)
    return None


def _null_view(e: Typed) -> Typed:
    return Typed(e.sql, "null", const=None) if e.known and e.const is None else e


def _int_view(e: Typed) -> Typed:
    return Typed(f"CAST({e.sql} AS BIGINT)", "int", e.aff, e.coll, e.col_coll) if e.t == "bool" else e


def _with_null(op: str, a: Typed, b: Typed) -> Typed:
    other = b if a.t == "null" else a
    if op not in ("IS", "IS NOT"):
        return null_beside((a, b), "bool")
    return Typed(f"({other.sql} IS {'' if op == 'IS' else 'NOT '}NULL)", "bool")


def dynamic(op: str, a: Typed, b: Typed, coll: str) -> Typed:
    """Values whose types only each row knows: sqlite3's rules, per row (udfs.compare)."""
    args = f"'{op}', CAST({a.sql} AS VARIANT), CAST({b.sql} AS VARIANT), '{a.aff}', '{b.aff}', '{coll}'"
    return Typed(f"__sq_compare({args})", "bool")


def _same_class(op: str, a: Typed, b: Typed, coll: str) -> Typed:
    if a.cls == "n" and {a.t, b.t} == {"int", "real"}:
        return _int_real(op, a, b) if a.t == "int" else _int_real(FLIP[op], b, a)
    x, y = (_compared_int(a).sql, _compared_int(b).sql) if a.t == b.t == "int" else (a.sql, b.sql)
    if a.cls == "t" and coll == "NOCASE":
        x, y = f"__sq_nocase({x})", f"__sq_nocase({y})"
    elif a.cls == "t" and coll == "RTRIM":
        x, y = f"rtrim({x}, ' ')", f"rtrim({y}, ' ')"
    return Typed(f"({x} {_NATIVE[op]} {y})", "bool")


def _int_real(op: str, i: Typed, r: Typed) -> Typed:
    """An INTEGER against a REAL, exactly: DuckDB would round the integer to a DOUBLE first."""
    if i.known and i.const is not None and abs(i.const) <= 2**53:
        return Typed(f"({_compared_int(i).sql} {_NATIVE[op]} {r.sql})", "bool")
    if not r.known or r.const is None:
        return Typed(f"__sq_{IR[op]}_ir({i.sql}, {r.sql})", "bool")
    real = float(r.const)
    if real >= TWO63 or real < -TWO63 or (op in ("=", "<>", "IS", "IS NOT") and real != int(real)):
        above = real >= TWO63
        fixed = {"<": above, "<=": above, ">": not above, ">=": not above, "=": False, "<>": True,
                 "IS": False, "IS NOT": True}[op]
        if op in ("IS", "IS NOT"):
            return boolean(fixed)
        return Typed(f"(CASE WHEN {i.sql} IS NULL THEN NULL ELSE {'true' if fixed else 'false'} END)", "bool")
    import math

    up, down = math.ceil(real), math.floor(real)
    bound = {"<": up, ">=": up, "<=": down, ">": down}.get(op, int(real))
    return Typed(f"({i.sql} {_NATIVE[op]} CAST({bound} AS BIGINT))", "bool")


def _compared_int(e: Typed) -> Typed:
    """A known INTEGER that fits 32 bits, compared, as DuckDB's bare literal (29, not CAST(29 AS BIGINT)): DuckDB
    compares it in the other side's type (BIGINT, DOUBLE), exactly, and binds the shorter text faster. In
    comparisons only: arithmetic on a bare literal could overflow 32 bits."""
    bare = bare_int(e.const) if e.t == "int" and e.known else None
    return e if bare is None else Typed(bare, e.t, e.aff, e.coll, e.col_coll, e.const, e.param)


def _class_order(op: str, a: Typed, b: Typed) -> Typed:
    """Values of different storage classes never convert: NULL < numbers < text < blobs decides."""
    if a.may_fail or b.may_fail:  # SQLite still evaluates both, and raises their errors
        return dynamic(op, a, b, a.coll or b.coll or a.col_coll or b.col_coll or "BINARY")
    order = -1 if RANK[a.cls] < RANK[b.cls] else 1
    if op in ("IS", "IS NOT"):
        both_null = f"({a.sql} IS NULL AND {b.sql} IS NULL)"
        return Typed(both_null if op == "IS" else f"(NOT {both_null})", "bool")
    answer = "true" if _ORDER[op](order) else "false"
    nullable = [e.sql for e in (a, b) if not (e.known and e.const is not None)]
    if not nullable:
        return Typed(answer, "bool")
    test = " OR ".join(f"{sql} IS NULL" for sql in nullable)
    return Typed(f"(CASE WHEN {test} THEN NULL ELSE {answer} END)", "bool")


# --- LIKE, GLOB, IN -----------------------------------------------------------------------------------------------
def like(ex: Expressions, node: Like) -> Typed:
    if node.op in ("MATCH", "REGEXP"):
        raise D1Unsupported(f"{node.op} needs an extension SQLite does not load in D1; use LIKE or GLOB")
    x, p = ex.emit(node.operand), ex.emit(node.pattern)
    esc = ex.emit(node.escape) if node.escape is not None else None
    parts = [x, p] + ([esc] if esc is not None else [])
    native = all(e.t not in ("blob", "any", "dyn") for e in parts) and not (
        any(e.t == "null" for e in parts) and any(e.may_fail for e in parts)  # SQLite evaluates all, and raises
    )
    result = _native_like(ex, node.op, x, p, esc) if native else None
    if result is None:
        template = f"SELECT ?1 {node.op} ?2" + (" ESCAPE ?3" if esc is not None else "")
        result = ex.delegate(template, parts, "bool", "BOOLEAN")
    return Typed(f"(NOT {result.sql})", "bool") if node.negated else result


def _native_like(ex: Expressions, op: str, x: Typed, p: Typed, esc: Typed | None) -> Typed | None:
    if op == "GLOB":
        if esc is not None or not (p.known and isinstance(p.const, str)):
            return None
        regex = _glob_regex(p.const)
        if regex is None:
            return None
        return Typed(f"regexp_full_match({ex.text(x).sql}, '{regex}')", "bool")
    if esc is not None and not (esc.known and isinstance(esc.const, str) and len(esc.const) == 1):
        return None
    args = [ex.text(x).sql, ex.text(p).sql] + ([ex.text(esc).sql] if esc is not None else [])
    return Typed(f"__sq_like({', '.join(args)})", "bool")


def _glob_regex(pattern: str) -> str | None:
    """A GLOB pattern of `*`, `?` and plain characters as an RE2 pattern; None for character sets."""
    if "[" in pattern:
        return None
    out = ["(?s)"]
    for char in pattern:
        if char == "*":
            out.append(".*")
        elif char == "?":
            out.append(".")
        else:
            out.append("\\" + char if char in _GLOB_SPECIAL else char)
    return "".join(out).replace("'", "''")


def _as_real(e: Typed) -> Typed:
    return Typed(f"CAST({e.sql} AS DOUBLE)", "real", e.aff, e.coll, e.col_coll) if e.t in ("int", "bool") else e


def in_list(ex: Expressions, node: InList) -> Typed:
    x = ex.emit(node.operand)
    if not node.items:
        return boolean(bool(node.negated))
    items = [Typed(i.sql, i.t, "", i.coll, "", i.const, i.param) for i in map(ex.emit, node.items)]
    coll = x.coll or x.col_coll or "BINARY"
    same = all(i.t == x.t and not i.coll for i in items) and x.t in ("int", "real", "text", "blob")
    if same and (x.t != "text" or coll == "BINARY"):
        body = f"({_compared_int(x).sql} IN ({', '.join(_compared_int(i).sql for i in items)}))"
    else:
        body = "(" + " OR ".join(compare(ex, "=", x, i).sql for i in items) + ")"
    return Typed(f"(NOT {body})" if node.negated else body, "bool")


def in_select(ex: Expressions, node: InSelect) -> Typed:
    """`x IN (SELECT c ...)`: as `x = c` row by row (with both sides' affinities); native where both have one type."""
    x = ex.emit(node.operand)
    sql, columns = ex.ctx.subquery(node.select)
    column = columns[0] if columns else Typed("", "any", aff="?")
    coll = x.coll or column.coll or x.col_coll or column.col_coll or "BINARY"
    same = x.t == column.t and x.t in ("int", "real", "text", "blob") and (x.t != "text" or coll == "BINARY")
    if same or x.t == "null":
        body = f"({x.sql} IN ({sql}))"
    else:
        value = Typed("__s.__v", column.t, column.aff, column.coll, column.col_coll)
        if sv.comparison_affinity(x.aff, column.aff)[0] == "REAL":
            # SQLite looks the value up in the subquery's rows as REAL affinity stores it: an INTEGER as a REAL
            x, value = _as_real(x), _as_real(value)
        match = compare(ex, "=", x, value).sql
        rows = f"(SELECT * FROM ({sql}) AS __s(__v)"
        body = (
            f"(CASE WHEN {x.sql} IS NULL THEN (CASE WHEN EXISTS {rows}) THEN NULL ELSE false END) "
            f"WHEN EXISTS {rows} WHERE {match}) THEN true "
            f"WHEN EXISTS {rows} WHERE __s.__v IS NULL) THEN NULL ELSE false END)"
        )
    return Typed(f"(NOT {body})" if node.negated else body, "bool")
