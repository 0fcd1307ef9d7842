"""Values written into columns (INSERT, UPDATE, upserts, REPLACE) and LIMIT/OFFSET counts, with SQLite's meaning.

A SQLite column keeps what its affinity makes of a value: '42' in an INTEGER column is 42, '4.5' a REAL, 'abc'
stays TEXT; a DuckDB column holds one type. So each value is converted as SQLite would convert it and written in
the column's DuckDB type; where SQLite would keep a value of another type than the column's (text in an INTEGER
column, a number in a DATETIME column, anything but a blob in a BLOB column) the statement is refused, naming the
column. Known values are settled here; bound parameters by their class; other values per row (udfs.store).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from memory_sim.bindings.d1_sql import Token
from memory_sim.errors import D1Error, D1Unsupported
from memory_sim.local.d1.dialect import values as sv
from memory_sim.local.d1.dialect.ast import Lit
from memory_sim.local.d1.dialect.operands import Typed, bare_int, literal
from memory_sim.local.d1.dialect.parser import number
from memory_sim.local.d1.dialect.schema import ColumnInfo
from memory_sim.local.d1.dialect.udfs import failure, refusal, store_refusal

if TYPE_CHECKING:
    from memory_sim.local.d1.dialect.typed import Expressions

_FITS = {"BIGINT": int, "DOUBLE": float, "VARCHAR": str, "BLOB": bytes}
_PARAM_CLASS = {"i": "INTEGER", "r": "REAL", "t": "TEXT"}
# (DuckDB type, affinity) where SQLite keeps a value of that type unchanged
_KEPT_AS_IS = frozenset({("DOUBLE", "REAL"), ("BIGINT", "INTEGER"), ("VARCHAR", "TEXT")})
_COLUMN_REF = re.compile(r'(?:"[^"]+"|[A-Za-z_]\w*)(?:\.(?:"[^"]+"|[A-Za-z_]\w*))?')


def store(ex: Expressions, e: Typed, column: ColumnInfo, where: str) -> str:
    """SQL for `e` written into `column` (named `where`, as table.column in messages); a computed text or blob
    over D1's 2,000,000 bytes fails as SQLite's does ("string or blob too big")."""
    sql = _stored(ex, e, column, where)
    if e.known or e.param or column.duck not in _FIT:
        return sql  # literals and bound values are checked before the statement runs
    return f"{_FIT[column.duck]}({sql})"


_FIT = {"VARCHAR": "__sq_fit_text", "BLOB": "__sq_fit_blob"}

_BOUND_TEXT = re.compile(r"CAST\((\x00p:\d+\x00) AS VARCHAR\)")  # a user's bound text (typed.py's _param)


def written(ex: Expressions, e: Typed, column: ColumnInfo, where: str) -> str:
    """store() for a value an INSERT's row writes straight into its column: a known 32-bit INTEGER into a BIGINT
    column, or a text without NUL into a VARCHAR one, as DuckDB's bare literal, which DuckDB converts to the
    column's type exactly when it writes it, and binds faster than CAST(...) (a one-row INSERT's DuckDB time -6 %).
    Not for an operand (arithmetic on a bare literal could overflow 32 bits), nor a VARIANT column (it would keep
    the literal's INTEGER type). So is a bound text written into a TEXT column."""
    bound = _BOUND_TEXT.fullmatch(e.sql) if e.param and column.duck == "VARCHAR" and column.aff == "TEXT" else None
    if bound is not None:
        return bound.group(1)  # the bound text itself: DuckDB types it by the column
    if e.known and e.const is not None and column.duck in ("BIGINT", "VARCHAR"):
        kept = sv.stored(e.const, column.aff)
        bare = bare_int(kept) if column.duck == "BIGINT" else None
        if bare is not None:
            return bare
        if column.duck == "VARCHAR" and type(kept) is str and "\x00" not in kept:
            return "'" + kept.replace("'", "''") + "'"
    return store(ex, e, column, where)


def _stored(ex: Expressions, e: Typed, column: ColumnInfo, where: str) -> str:
    duck, aff = column.duck, column.aff
    if e.t == "null" or (e.known and e.const is None):
        return f"CAST(NULL AS {duck})"
    if e.known:
        return _known(e.const, column, where)
    if e.t == "bool":
        e = Typed(f"CAST({e.sql} AS BIGINT)", "int")
    if duck == "VARIANT":
        return _into_variant(ex, e, aff, where)
    fits = _static(ex, e, duck, aff, where)
    if fits is not None:
        return fits
    converted = f"CAST(__sq_store(CAST({e.sql} AS VARIANT), '{aff}', '{duck}', '{_quote(where)}') AS {duck})"
    if (duck, aff) in _KEPT_AS_IS and _COLUMN_REF.fullmatch(e.sql):
        # A row's value already of the column's type is kept as it is: only the others cost a Python call
        # (UPDATE ... SET r = j.value FROM json_each(?) of 20,000 REALs: 1.73 s -> 0.6 s). A column reference
        # only, as the value is read twice.
        value = f"CAST({e.sql} AS VARIANT)"
        return f"CASE WHEN variant_typeof({value}) = '{duck}' THEN CAST({value} AS {duck}) ELSE {converted} END"
    return converted


def _known(value: object, column: ColumnInfo, where: str) -> str:
    kept = sv.stored(value, column.aff)
    expected = _FITS.get(column.duck, object)
    if not isinstance(kept, expected) or isinstance(kept, bool):
        raise D1Unsupported(store_refusal(kept, column.aff, where))
    sql = literal(kept).sql
    return f"CAST({sql} AS VARIANT)" if column.duck == "VARIANT" else sql


def _static(ex: Expressions, e: Typed, duck: str, aff: str, where: str) -> str | None:
    """The conversion where the value's type alone decides it; None where each row's value does."""
    if duck == "BIGINT":
        if e.t == "int":
            return e.sql
        if e.t == "real":
            why = refusal(_described("a REAL that is not a whole number", aff, where))
            return f"__sq_whole({e.sql}, '{_quote(why)}')"
        if e.t == "text" and e.param:
            return _text_param(ex, e, duck, aff, where)
    elif duck == "DOUBLE":
        if e.t == "real" or (e.t in ("int", "num") and aff == "REAL"):
            return f"CAST({e.sql} AS DOUBLE)"
        if e.t == "text" and e.param:
            return _text_param(ex, e, duck, aff, where)
    elif duck == "VARCHAR":
        if e.t == "text" and aff == "TEXT":
            return e.sql
        if e.t in ("int", "real") and aff == "TEXT":
            return ex.text(e).sql
        if e.t == "text" and e.param:
            return _text_param(ex, e, duck, aff, where)
        if e.t in ("int", "real", "num", "blob"):
            raise D1Unsupported(_described(f"a {_name(e.t)} value", aff, where))
    elif duck == "BLOB":
        if e.t == "blob":
            return e.sql
        if e.t in ("int", "real", "num", "text"):
            raise D1Unsupported(_described(f"a {_name(e.t)} value", aff, where))
    if e.t == "blob" and duck != "BLOB":
        raise D1Unsupported(_described("a BLOB value", aff, where))
    return None


def _text_param(ex: Expressions, e: Typed, duck: str, aff: str, where: str) -> str:
    """A text parameter: what the column's affinity makes of it, by the class the engine read from its value."""
    cls = ex.ctx.param_class(e.param)[1]  # what numeric affinity makes of it: i, r or t (stays text)
    kept = {"INTEGER": cls, "NUMERIC": cls, "REAL": "r" if cls != "t" else "t"}.get(aff, "t")
    if duck == "BIGINT" and kept == "i":
        return ex.param_extra("aff", e, "i").sql
    if duck == "DOUBLE" and kept == "r":
        return ex.param_extra("real", e, "r").sql
    if duck == "VARCHAR" and kept == "t":
        return e.sql
    raise D1Unsupported(_described(f"a TEXT parameter (?{e.param}) that SQLite keeps as {_PARAM_CLASS[kept]}",
                                   aff, where))


def _into_variant(ex: Expressions, e: Typed, aff: str, where: str) -> str:
    """A NUMERIC column (a VARIANT here): INTEGERs, REALs, text that is not a number, blobs, each as SQLite keeps it."""
    if e.t in ("int", "blob"):
        return f"CAST({e.sql} AS VARIANT)"
    if e.t == "text" and e.param:
        return ex.param_extra("stored", e, "v").sql
    return f"__sq_store(CAST({e.sql} AS VARIANT), '{aff}', 'VARIANT', '{_quote(where)}')"


def _described(what: str, aff: str, where: str) -> str:
    return (
        f"{what} in {aff} column {where}: SQLite would keep it with another type than the column's, a DuckDB "
        "column holds one type; store a value of the column's type or declare the column with the type you store"
    )


def _name(t: str) -> str:
    return {"int": "INTEGER", "real": "REAL", "num": "numeric", "text": "TEXT", "blob": "BLOB"}.get(t, t)


def _quote(text: str) -> str:
    return text.replace("'", "''")


# --- LIMIT and OFFSET ---------------------------------------------------------------------------------------------
_MISMATCH = D1Error("datatype mismatch: SQLITE_MISMATCH")


def count(ex: Expressions, e: Typed, offset: bool) -> str:
    """LIMIT/OFFSET as SQLite reads them: an integer (a whole REAL or integer text will do); a negative LIMIT is
    no limit, a negative OFFSET none; anything else is a datatype mismatch."""
    if e.known:
        value = e.const
        number = sv.stored(value, "INTEGER") if isinstance(value, (str, float)) else value
        if not isinstance(number, int) or isinstance(number, bool):
            raise _MISMATCH
        if number >= 0 or offset:  # a plain count keeps DuckDB's top-N plans
            return str(max(number, 0))
        e = literal(number)
    elif e.t == "text" and e.param:
        if ex.ctx.param_class(e.param)[1] != "i":
            raise _MISMATCH
        e = ex.param_extra("aff", e, "i")
    elif e.t == "real":
        e = Typed(f"__sq_whole({e.sql}, '{_quote(failure('SQLITE_MISMATCH', 'datatype mismatch'))}')", "int")
    elif e.t in ("null", "blob"):
        raise _MISMATCH
    elif e.t != "int":
        raise D1Unsupported(
            "LIMIT or OFFSET of a value that is not an INTEGER on the DuckDB engine; CAST it AS INTEGER"
        )
    if offset:
        return f"greatest({e.sql}, 0)"
    return f"(CASE WHEN {e.sql} < 0 THEN NULL ELSE {e.sql} END)"


NOT_LITERAL = object()


def number_or_value(tok: Token) -> Any:
    """A literal token's SQLite value, or NOT_LITERAL."""
    if tok.is_word("NULL"):
        return None
    if tok.kind == "number":
        lit: Lit = number(tok.text)
        return float(lit.value) if lit.kind == "bigint" else lit.value  # type: ignore[arg-type]
    if tok.kind == "string":
        return tok.text[1:-1].replace("''", "'")
    if tok.kind == "blob":
        return bytes.fromhex(tok.text[2:-1])
    return NOT_LITERAL


def stored_literal(value: Any, info: ColumnInfo, where: str) -> str:
    return _known(value, info, where) if value is not None else f"CAST(NULL AS {info.duck})"
