"""A SQLite value as the dialect writes it for DuckDB (`Typed`): its SQL, its static type, affinity and collation,
and its value where translation already knows it; and SQLite's order of storage classes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from memory_sim.local.d1.dialect.ast import Sub
from memory_sim.local.d1.dialect.schema import ColumnInfo

NOCONST: Any = object()
NOT_UTF8 = (
    "a text that is not valid UTF-8 (a BLOB read as TEXT): SQLite keeps its bytes, a DuckDB text cannot; keep the "
    "value a BLOB (hex() shows it as text)"
)
NUMERIC_TYPES = ("int", "real", "num", "bool")
DUCK_TYPES = {"BIGINT": "int", "INTEGER": "int", "DOUBLE": "real", "VARCHAR": "text", "BLOB": "blob",
               "VARIANT": "dyn", "BOOLEAN": "bool"}
CLASS = {"int": "n", "real": "n", "num": "n", "bool": "n", "text": "t", "blob": "b", "null": "", "any": "?",
          "dyn": "?"}
RANK = {"n": 1, "t": 2, "b": 3}
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>", "IS": "IS", "IS NOT": "IS NOT"}
IR = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "=": "eq", "<>": "ne", "IS": "is", "IS NOT": "isnot"}
TWO63 = 2.0**63
SUBQUERY = "sq:"  # an extra that is a scalar subquery asked before the statement: "sq:<its DuckDB text>"


@dataclass(frozen=True, slots=True)
class Typed:
    sql: str
    t: str
    aff: str = ""
    coll: str = ""  # from an explicit COLLATE
    col_coll: str = ""  # the column's declared collation
    const: Any = NOCONST
    param: int = 0  # a bare user parameter's number

    @property
    def cls(self) -> str:
        return CLASS[self.t]

    @property
    def known(self) -> bool:
        return self.const is not NOCONST

    @property
    def may_fail(self) -> bool:
        """Evaluating it may raise an error SQLite would raise too (it must not be optimised away)."""
        return "__sq_eval" in self.sql or "__sq_store" in self.sql or "error(" in self.sql


class Context(Protocol):
    """What the statement layer gives the expression emitter."""

    def resolve(self, names: tuple[str, ...]) -> ColumnInfo | None: ...

    def param_class(self, number: int) -> str: ...

    def extra(self, name: str) -> str: ...

    def subquery(self, sub: Sub) -> tuple[str, list[Typed]]: ...

    def hoisted(self, sql: str, t: str) -> str | None: ...

    def window(self, over: tuple[int, int] | str) -> str: ...


def literal(value: Any) -> Typed:
    """A known SQLite value as DuckDB SQL of its exact type."""
    if value is None:
        return Typed("NULL", "null", const=None)
    if isinstance(value, (bool, int)):
        return Typed(f"CAST({int(value)} AS BIGINT)", "int", const=int(value))
    if isinstance(value, float):
        return Typed(_double(value), "real", const=value)
    if isinstance(value, str):
        quoted = " || chr(0) || ".join("'" + part.replace("'", "''") + "'" for part in value.split("\x00"))
        return Typed(f"CAST({quoted} AS VARCHAR)", "text", const=value)  # no NUL in the SQL text: see Emitter.extra
    return Typed(f"from_hex('{bytes(value).hex()}')", "blob", const=bytes(value))


def bare_int(value: object) -> str | None:
    """DuckDB's bare literal for an INTEGER that fits 32 bits ("29", "(-7)": a sign binds looser than :: and
    COLLATE), which DuckDB types INTEGER; None for any other value (beyond 32 bits it would be typed otherwise)."""
    if type(value) is not int or not -(2**31) < value < 2**31:
        return None
    return str(value) if value >= 0 else f"({value})"


def _double(value: float) -> str:
    """A DOUBLE literal: DuckDB reads a number with an exponent as a DOUBLE, through the same conversion as
    CAST('...' AS DOUBLE) (a plain 1.5 would be a DECIMAL), and binds the shorter text faster."""
    if not math.isfinite(value):
        return f"CAST('{'inf' if value > 0 else '-inf'}' AS DOUBLE)"
    text = repr(value)
    text = text if "e" in text else f"{text}e0"
    return f"({text})" if text.startswith("-") else text  # a sign binds looser than :: and COLLATE


def boolean(value: bool | None) -> Typed:
    return Typed("CAST(NULL AS BOOLEAN)" if value is None else ("true" if value else "false"), "bool")


def null_beside(operands: Sequence[Typed], t: str = "null") -> Typed:
    """NULL, the value of an operator with a NULL operand, keeping every operand that is not a known constant in
    the query: an aggregate in any of them (`NULL * count(*)`, `avg(NULL) / 2`, `NULL = max(a)`) keeps the query
    an aggregate, which answers one row where no row matches. Known operands hold no aggregate: dropped."""
    kept = [o.sql for o in operands if not o.known]
    if not kept:
        return boolean(None) if t == "bool" else literal(None)
    sql = f"(CASE WHEN {' OR '.join(f'{k} IS NULL' for k in kept)} THEN NULL END)"
    return Typed(f"CAST({sql} AS BOOLEAN)", "bool") if t == "bool" else Typed(sql, "null")
