"""SQLite expressions (parser.py trees) written as DuckDB SQL with SQLite's meaning, typed as they go.

Every value carries its static type as DuckDB will see it (int, real, text, blob, bool, null; `num` a native
number of either kind; `any` a native type we cannot name; `dyn` a VARIANT holding SQLite's type per row), its
SQLite affinity (a column's; "" for none, "?" for a column we cannot resolve) and collation. With both types known
the emitter writes native SQL, or answers at translation time (a literal, a bound parameter whose class is part of
the cache key); where values of several types meet per row, sqlite3 itself answers through a Python function
(udfs.py), so the answer is SQLite's. What neither can honour is refused (D1Unsupported) with the SQLite
alternative. Operators are always parenthesised: DuckDB's precedence is not SQLite's.
"""

from __future__ import annotations

from dataclasses import replace

from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect import values as sv
from memory_sim.local.d1.dialect.ast import (
    Between,
    Binary,
    Call,
    Case,
    Cast,
    Collate,
    Column,
    InList,
    InSelect,
    Like,
    Lit,
    Node,
    Now,
    NullTest,
    Param,
    Row,
    Sub,
    Truth,
    Unary,
    aggregates,
)
from memory_sim.local.d1.dialect.calls import call, cast
from memory_sim.local.d1.dialect.compare import compare, in_list, in_select, like
from memory_sim.local.d1.dialect.functions import NOW_TEXT
from memory_sim.local.d1.dialect.operands import (
    DUCK_TYPES,
    FLIP,
    NOCONST,
    NOT_UTF8,
    Context,
    Typed,
    boolean,
    literal,
    null_beside,
)
from memory_sim.local.d1.dialect.udfs import MAX_EVAL_ARGS, SqliteFailure, evaluate


class Expressions:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    # --- entry points -------------------------------------------------------------------------------------------
    def emit(self, node: Node) -> Typed:
        method = getattr(self, "_" + type(node).__name__.lower())
        return method(node)

    def condition(self, node: Node) -> str:
        return self.truth(self.emit(node)).sql

    # --- leaves -------------------------------------------------------------------------------------------------
    def _lit(self, node: Lit) -> Typed:
        if node.kind == "bigint":
            return literal(float(node.value))  # type: ignore[arg-type]
        return literal(node.value)

    def _now(self, node: Now) -> Typed:

        return Typed(NOW_TEXT[node.word], "text")

    def _param(self, node: Param) -> Typed:
        cls = self.ctx.param_class(node.number)
        if cls == "n":
            return Typed("NULL", "null", const=None)  # the value is known: nothing to bind
        mark = self.ctx.extra(f"p:{node.number}")
        if cls in ("i", "I"):
            return Typed(f"CAST({mark} AS BIGINT)", "int", param=node.number)
        if cls == "r":
            return Typed(f"CAST({mark} AS DOUBLE)", "real", param=node.number)
        if cls == "b":
            return Typed(f"CAST({mark} AS BLOB)", "blob", param=node.number)
        return Typed(f"CAST({mark} AS VARCHAR)", "text", param=node.number)

    def _column(self, node: Column) -> Typed:
        info = self.ctx.resolve(node.names)
        if info is None:
            return Typed(node.text, "any", aff="?")
        return Typed(node.text, DUCK_TYPES.get(info.duck, "any"), aff=info.aff, col_coll=info.coll)

    def _sub(self, node: Sub) -> Typed:
        sql, columns = self.ctx.subquery(node)
        if node.exists:
            return Typed(f"(EXISTS ({sql}))", "bool")
        first = columns[0] if columns else Typed("", "any", aff="?")
        hoisted = self.ctx.hoisted(sql, first.t) if len(columns) == 1 else None
        return Typed(hoisted or f"({sql})", first.t, aff=first.aff, col_coll=first.col_coll)

    def _row(self, node: Row) -> Typed:
        raise D1Unsupported("row values ((a, b) = (1, 2)) on the DuckDB engine; compare each column with AND")

    def _call(self, node: Call) -> Typed:

        return call(self, node)

    def _collate(self, node: Collate) -> Typed:
        inner = self.emit(node.operand)
        name = node.collation.upper()
        if name not in ("BINARY", "NOCASE", "RTRIM"):
            raise D1Unsupported(f"collation {name} on the DuckDB engine; use BINARY, NOCASE or RTRIM")
        return replace(inner, coll=name)

    # --- helpers shared with calls.py ---------------------------------------------------------------------
    def param_extra(self, kind: str, typed: Typed, cls: str) -> Typed:
        """A bound parameter seen through a conversion the engine computes in Python (`kind:number`)."""
        mark = self.ctx.extra(f"{kind}:{typed.param}")
        if cls == "i":
            return Typed(f"CAST({mark} AS BIGINT)", "int")
        if cls == "r":
            return Typed(f"CAST({mark} AS DOUBLE)", "real")
        if cls == "b":
            return Typed(f"CAST({mark} AS BOOLEAN)", "bool")
        if cls == "v":
            return Typed(f"CAST({mark} AS VARIANT)", "dyn")
        return Typed(f"CAST({mark} AS VARCHAR)", "text")

    def delegate(self, template: str, args: list[Typed], t: str = "dyn", cast: str = "") -> Typed:
        """sqlite3 answers `template` (a SELECT of ?1..?n) row by row; folded here when every argument is known."""
        if all(a.known for a in args):
            try:
                return literal(evaluate(template, *[a.const for a in args]))
            except SqliteFailure:
                pass  # SQLite raises it only if the row is reached: leave it to run time
        if len(args) > MAX_EVAL_ARGS:
            raise D1Unsupported(f"an expression with more than {MAX_EVAL_ARGS} values of mixed types; split it")
        values = "".join(f", CAST({a.sql} AS VARIANT)" for a in args)
        sql = f"__sq_eval_{len(args)}('" + template.replace("'", "''") + f"'{values})"
        return Typed(f"CAST({sql} AS {cast})" if cast else sql, t)

    def text(self, e: Typed) -> Typed:
        """The value as SQLite converts it to TEXT."""
        if e.t == "text":
            return Typed(e.sql, "text", const=e.const, param=e.param)
        if e.t == "null":
            return Typed("CAST(NULL AS VARCHAR)", "text", const=None)
        if e.known and isinstance(e.const, bytes):
            try:
                return literal(e.const.decode("utf-8"))
            except UnicodeDecodeError:
                raise D1Unsupported(NOT_UTF8) from None
        if e.known:
            return literal(sv.as_text(e.const))
        if e.t == "int":
            return Typed(f"CAST({e.sql} AS VARCHAR)", "text")
        if e.t == "bool":
            return Typed(f"CAST(CAST({e.sql} AS BIGINT) AS VARCHAR)", "text")
        if e.t == "real" and e.param:
            return self.param_extra("text", e, "t")
        return self.delegate("SELECT CAST(?1 AS TEXT)", [e], "text", "VARCHAR")

    def number(self, e: Typed) -> Typed | None:
        """The operand as a native number for arithmetic (SQLite reads a text's numeric prefix), or None where that
        depends on each row's value."""
        if e.t in ("int", "real", "num", "null"):
            return e
        if e.t == "bool":
            return Typed(f"CAST({e.sql} AS BIGINT)", "int")
        if e.t == "text" and e.known:
            return literal(None if e.const is None else sv.arithmetic_value(e.const))
        if e.t == "text" and e.param:
            return self.param_extra("arith", e, self.ctx.param_class(e.param)[2])
        return None

    def truth(self, e: Typed) -> Typed:
        """The value as a condition (SQLite: non-zero is true; text by its numeric prefix)."""
        if e.t == "bool":
            return e
        if e.known:
            return boolean(None if e.const is None else bool(sv.cast_real(e.const)))
        if e.t in ("int", "num"):
            return Typed(f"({e.sql} <> 0)", "bool")
        if e.t == "real":
            return Typed(f"({e.sql} <> 0.0)", "bool")
        if e.t == "null":
            return boolean(None)
        if e.t == "text" and e.param:
            return self.param_extra("truth", e, "b")
        return self.delegate("SELECT CASE WHEN ?1 IS NULL THEN NULL WHEN ?1 THEN 1 ELSE 0 END", [e], "bool", "BOOLEAN")

    def unify(self, values: list[Typed]) -> tuple[list[str], str]:
        """Branches of a CASE (or arguments of coalesce...) written so DuckDB keeps each row's SQLite type: one
        native type where they share one, VARIANTs where they do not."""
        kinds = {v.t for v in values if v.t != "null"}
        if kinds == {"int", "bool"}:
            return [f"CAST({v.sql} AS BIGINT)" if v.t == "bool" else v.sql for v in values], "int"
        if len(kinds) == 1 and not kinds & {"any", "num"}:
            return [v.sql for v in values], kinds.pop()
        if not kinds:
            return [v.sql for v in values], "null"
        return [f"CAST({v.sql} AS VARIANT)" for v in values], "dyn"

    # --- operators ------------------------------------------------------------------------------------------------
    def _unary(self, node: Unary) -> Typed:
        e = self.emit(node.operand)
        if node.op == "NOT":
            return Typed(f"(NOT {self.truth(e).sql})", "bool")
        if node.op == "+":
            return replace(e, aff="", col_coll="")
        if e.known:
            return self.delegate(f"SELECT {node.op}?1", [e])
        if node.op == "-":
            n = self.number(e)
            if n is not None:
                return Typed(f"(- {n.sql})", n.t)
        elif e.t in ("int", "bool"):
            return Typed(f"(~ {self.number(e).sql})", "int")  # type: ignore[union-attr]
        return self.delegate(f"SELECT {node.op}?1", [e])

    def _binary(self, node: Binary) -> Typed:
        op = node.op
        if op == "AND" and (_is_literal_false(node.left) or _is_literal_false(node.right)):
            # SQLite folds `0 AND x` (an integer token 0 on either side) to 0 as it parses, dropping x unread:
            # an aggregate in x no longer makes the query an aggregate, and an error in x is never raised.
            return literal(0)
        if op in ("AND", "OR"):
            a, b = self.truth(self.emit(node.left)), self.truth(self.emit(node.right))
            return Typed(f"({a.sql} {op} {b.sql})", "bool")
        a, b = self.emit(node.left), self.emit(node.right)
        if op in FLIP:

            return compare(self, op, a, b)
        if a.known and b.known:
            return self.delegate(f"SELECT ?1 {op} ?2", [a, b])
        if op == "||":
            if "null" in (a.t, b.t) and (a.may_fail or b.may_fail):  # SQLite still evaluates, and raises
                return self.delegate("SELECT ?1 || ?2", [a, b], "text", "VARCHAR")
            x, y = self.text(a), self.text(b)
            return Typed(f"({x.sql} || {y.sql})", "text")
        if op == "->":
            return self.delegate("SELECT ?1 -> ?2", [a, b], "text", "VARCHAR")
        if op == "->>":
            return self.delegate("SELECT ?1 ->> ?2", [a, b])
        return self.arithmetic(op, a, b)

    def arithmetic(self, op: str, a: Typed, b: Typed) -> Typed:
        x, y = self.number(a), self.number(b)
        if x is None or y is None or op in ("<<", ">>") or (op in ("&", "|", "%") and "real" in (x.t, y.t)):
            return self.delegate(f"SELECT ?1 {op} ?2", [a, b])
        if "null" in (x.t, y.t):
            if a.may_fail or b.may_fail:  # SQLite still evaluates the other operand, and its error
                return self.delegate(f"SELECT ?1 {op} ?2", [a, b])
            return null_beside((x, y))
        kinds = {x.t, y.t}
        t = "int" if kinds == {"int"} else ("real" if "real" in kinds and "num" not in kinds else "num")
        if op in ("&", "|") and t != "int":
            return self.delegate(f"SELECT ?1 {op} ?2", [a, b])
        sql = f"({x.sql} {op} {y.sql})"
        if t == "real":
            sql = f"nullif({sql}, CAST('nan' AS DOUBLE))"  # SQLite has no NaN: Inf - Inf is NULL
        return Typed(sql, t)

    def _like(self, node: Like) -> Typed:

        return like(self, node)

    def _between(self, node: Between) -> Typed:

        x = self.emit(node.operand)
        low = compare(self, ">=", x, self.emit(node.low))
        high = compare(self, "<=", x, self.emit(node.high))
        both = f"({low.sql} AND {high.sql})"
        return Typed(f"(NOT {both})" if node.negated else both, "bool")

    def _inlist(self, node: InList) -> Typed:

        return in_list(self, node)

    def _inselect(self, node: InSelect) -> Typed:

        return in_select(self, node)

    def _nulltest(self, node: NullTest) -> Typed:
        e = self.emit(node.operand)
        return Typed(f"({e.sql} IS {'NOT ' if node.negated else ''}NULL)", "bool")

    def _truth(self, node: Truth) -> Typed:
        t = self.truth(self.emit(node.operand))
        return Typed(f"({t.sql} IS {'NOT ' if node.negated else ''}{'true' if node.value else 'false'})", "bool")

    def _case(self, node: Case) -> Typed:

        base = self.emit(node.base) if node.base is not None else None
        # A WHEN known at translation time is settled here, as SQLite never reads what it skips: an arm that
        # cannot match is dropped, one that matches ends the CASE (its value the ELSE), so a column outside
        # GROUP BY in a skipped arm is no bare column. Never what holds an aggregate (it makes the query one), nor
        # around a base that may fail (SQLite reads it).
        steady = base is None or not (base.may_fail or aggregates(node.base))
        conditions, values, default = [], [], node.default
        for k, (when, value) in enumerate(node.whens):
            cond = self.emit(when)
            match = self._known_match(base, cond) if steady else NOCONST
            if match is True and not aggregates([node.whens[k + 1:], node.default]):
                default = value
                break
            if match is not True and match is not NOCONST and not cond.may_fail and not aggregates([when, value]):
                continue
            conditions.append(compare(self, "=", base, cond).sql if base is not None else self.truth(cond).sql)
            values.append(value)
        if not conditions:
            return self._value_of_case(default)
        results = [self.emit(value) for value in values]
        results.append(self.emit(default) if default is not None else literal(None))
        sqls, t = self.unify(results)
        body = " ".join(f"WHEN {c} THEN {r}" for c, r in zip(conditions, sqls, strict=False))
        return Typed(f"(CASE {body} ELSE {sqls[-1]} END)", t)

    def _known_match(self, base: Typed | None, when: Typed) -> object:
        """Whether a CASE arm matches, where translation can tell (True, False, or None for NULL; NOCONST where
        only the rows can): CASE WHEN a constant; CASE base WHEN value with either NULL, or both constants of no
        affinity, compared as SQLite compares them."""
        if base is None:
            return (None if when.const is None else bool(sv.cast_real(when.const))) if when.known else NOCONST
        if (base.known and base.const is None) or (when.known and when.const is None):
            return None
        plain = base.aff == when.aff == "" and not (base.coll or when.coll)
        if plain and base.known and when.known:
            return sv.compare(base.const, when.const, "BINARY") == 0
        return NOCONST

    def _value_of_case(self, node: Node | None) -> Typed:
        """The one value a CASE settled at translation time gives, without the affinity or collation a column
        would lend it (a CASE has none)."""
        if node is None:
            return literal(None)
        value = self.emit(node)
        return Typed(f"(CASE WHEN true THEN {value.sql} END)", value.t, const=value.const)

    def _cast(self, node: Cast) -> Typed:

        return cast(self, self.emit(node.operand), node.type_name)


def _is_literal_false(node: Node) -> bool:
    """An integer token worth 0, as SQLite's parser marks it (EP_IsFalse) when it builds AND: not `-0`, not FALSE
    (marked later, at name resolution), not an expression worth 0."""
    return isinstance(node, Lit) and node.zero_token
