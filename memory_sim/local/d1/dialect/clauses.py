"""The statement layer of the typed dialect: walks a statement's tokens clause by clause, copies what is not an
expression (keywords, table names, aliases, column lists) and hands each expression to the parser (parser.py)
and the typed emitter (typed.py), with what the clause means: a condition (WHERE, ON, HAVING), a result column,
a sort key (ORDER BY: values of mixed types sort by SQLite's class order), a group key, a stored value (SET, VALUES
of an INSERT: store.py), a count (LIMIT, OFFSET). Subqueries, CTEs and window specifications are written by a
nested walker over their token range.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_sim.bindings.d1_sql import Token
from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect import json_table
from memory_sim.local.d1.dialect.ast import Column, Lit, Node, Sub, aggregates
from memory_sim.local.d1.dialect.keywords import (
    CLAUSE_WORDS,
    DIRECTION,
    KEYWORDS,
    LIST_CLAUSES,
    sort_keys,
    starts_expression,
)
from memory_sim.local.d1.dialect.operands import SUBQUERY, Typed
from memory_sim.local.d1.dialect.parser import STOP_WORDS, Parser
from memory_sim.local.d1.dialect.schema import ColumnInfo
from memory_sim.local.d1.dialect.store import store
from memory_sim.local.d1.dialect.typed import Expressions

if TYPE_CHECKING:
    from memory_sim.local.d1.dialect.expressions import Emitter



_HOISTED_TYPES = {"int": "BIGINT", "real": "DOUBLE", "text": "VARCHAR"}


class Walker:
    """Writes one statement (or a parenthesised part of one) as DuckDB SQL; also the emitter's Context."""

    def __init__(self, em: Emitter, toks: list[Token], lo: int, hi: int, clause: str = "auto", depth: int = 0) -> None:
        self.em, self.toks, self.lo, self.hi = em, toks, lo, hi
        self.clause = clause
        self.depth = depth
        # Result columns of mixed or unknown type leave DuckDB as a struct the engine decodes (duckdb_rows.py): a
        # sorted VARIANT can come back with the wrong type in DuckDB 2.0. Not in compound SELECTs, views or subqueries.
        self.wrap = depth == 0 and em.wrap_output and not self._compound()
        self.expect_item = True
        self.out: list[str] = []
        self.arms: list[list[Typed]] = [[]]
        self.aliases: dict[str, Typed] = {}
        self.distinct = False
        self.deduplicated = False
        self.set_column: str | None = None
        # The body of a recursive CTE: its step reads the CTE's own columns, of unknown type, so every arm's
        # columns are VARIANTs and each row keeps its SQLite type (DuckDB would give them the anchor's type).
        self.variant_columns = False
        # A VALUES row's scalar subqueries (which can read no outer row) asked of DuckDB once before the statement and
        # bound: written inline, DuckDB plans a join for each row's copy (6 rows of remember: 2.6 ms of 6).
        self.hoist_subqueries = False
        self.cte_columns: tuple[str, ...] = ()  # a recursive CTE's name and listed columns (its body's walker)
        # SELECT DISTINCT over values of mixed types is refused unless the SELECT gives one row at most (no FROM,
        # or aggregates without GROUP BY): DuckDB's DISTINCT would keep 1 and 1.0 apart, SQLite's would not.
        self._distinct_dyn = self._aggregated = self._from = self._grouped = False
        self.ex = Expressions(self)

    # --- Context ----------------------------------------------------------------------------------------------
    def resolve(self, names: tuple[str, ...]) -> ColumnInfo | None:
        return self.em.scope.resolve(names)

    def param_class(self, number: int) -> str:
        return self.em.param_class(number)

    def extra(self, name: str) -> str:
        return self.em.extra(name)

    def subquery(self, sub: Sub) -> tuple[str, list[Typed]]:
        inner = Walker(self.em, self.toks, sub.lo, sub.hi, depth=self.depth + 1)
        return inner.write(), inner.columns

    def hoisted(self, sql: str, t: str) -> str | None:
        """A scalar subquery as the value the engine binds (the extra SUBQUERY + its SQL, asked once a statement),
        where hoisting is on, it binds nothing of its own and its type is one a bound value keeps exactly; else
        None."""
        if not self.hoist_subqueries or "\x00" in sql or t not in _HOISTED_TYPES:
            return None
        return f"CAST({self.extra(SUBQUERY + sql)} AS {_HOISTED_TYPES[t]})"

    def window(self, over: tuple[int, int] | str) -> str:
        if isinstance(over, str):
            return over
        return "(" + Walker(self.em, self.toks, over[0], over[1], "window", self.depth + 1).write() + ")"

    def _compound(self) -> bool:
        depth = 0
        for tok in self.toks[self.lo:self.hi]:
            if tok.kind == "op" and tok.text in "()":
                depth += 1 if tok.text == "(" else -1
            elif depth == 0 and tok.is_word("UNION", "EXCEPT", "INTERSECT"):
                return True
        return False

    @property
    def columns(self) -> list[Typed]:
        return self.arms[0]

    # --- the walk -----------------------------------------------------------------------------------------------
    def write(self) -> str:
        i = self.lo
        while i < self.hi:
            tok = self.toks[i]
            if tok.trivia:
                self.out.append(" ")
                i += 1
                continue
            i = self.step(i, tok)
        self._settle_distinct()
        self._check_arms()
        return "".join(self.out).strip()

    def step(self, i: int, tok: Token) -> int:
        if tok.kind == "word" and self._is_keyword(i, tok):
            return self.keyword(i, tok)
        clause = self.clause
        if clause == "from" or clause == "conflict":
            return self.from_item(i, tok)
        if clause == "set":
            return self.assignment(i, tok)
        if clause == "values":
            return self.values(i, tok)
        if clause in ("cte", "window_def"):
            return self.definition(i, tok)
        if clause in ("frame", "verbatim"):
            return self.copy(i)
        if tok.kind == "op" and tok.text == ",":
            self.expect_item = True
            return self.copy(i)
        if clause in LIST_CLAUSES and not self.expect_item:
            return self.copy(i)  # an alias, a direction
        if clause in LIST_CLAUSES and self._star(i, tok):
            return self._copy_star(i, tok)
        if clause == "window" and tok.kind == "word" and not self.expect_item:
            return self.copy(i)
        if starts_expression(tok):
            return self.expression(i)
        return self.copy(i)

    def _is_keyword(self, i: int, tok: Token) -> bool:
        upper = tok.upper
        if upper not in KEYWORDS:
            return False
        if upper in DIRECTION:  # ASC, DESC, NULLS FIRST/LAST: only right after a sort key; else may be names
            return self.clause in ("order", "window", "partition") and not self.expect_item
        if self.clause in LIST_CLAUSES and not self.expect_item and upper not in CLAUSE_WORDS:
            return upper == "AS"
        return True

    def keyword(self, i: int, tok: Token) -> int:
        upper = tok.upper
        if upper == "FROM":
            self._from = True
        elif upper == "GROUP":
            self._grouped = True
        handler = KEYWORDS[upper]
        return handler(self, i, tok)

    # --- copying --------------------------------------------------------------------------------------------------
    def copy(self, i: int) -> int:
        self.out.append(self.em.verbatim(self.toks[i], "".join(self.out[-2:])))
        return i + 1

    def copy_group(self, i: int) -> int:
        """A parenthesised group copied as it stands (a column list)."""
        close = self.closing(i)
        for k in range(i, close + 1):
            if not self.toks[k].trivia:
                self.out.append(self.em.verbatim(self.toks[k], "".join(self.out[-2:])))
            elif self.out and self.out[-1] != " ":
                self.out.append(" ")
        return close + 1

    def nested(self, i: int, clause: str = "auto") -> int:
        close = self.closing(i)
        self.out.append("(" + Walker(self.em, self.toks, i + 1, close, clause, self.depth + 1).write() + ")")
        return close + 1

    def closing(self, open_i: int) -> int:
        depth = 0
        for k in range(open_i, self.hi):
            tok = self.toks[k]
            if tok.kind == "op" and tok.text == "(":
                depth += 1
            elif tok.kind == "op" and tok.text == ")":
                depth -= 1
                if depth == 0:
                    return k
        raise D1Unsupported("unbalanced parentheses")

    def next_sig(self, i: int) -> int | None:
        while i < self.hi and self.toks[i].trivia:
            i += 1
        return i if i < self.hi else None

    def _star(self, i: int, tok: Token) -> bool:
        if tok.kind == "op" and tok.text == "*":
            return True
        dot = self.next_sig(i + 1)
        star = self.next_sig(dot + 1) if dot is not None else None
        return tok.kind in ("word", "qident") and dot is not None and self.toks[dot].text == "." and star is not None \
            and self.toks[star].text == "*"

    def _copy_star(self, i: int, tok: Token) -> int:
        self.arms[-1].append(Typed("*", "any", aff="?"))
        self.expect_item = False
        if tok.text == "*":
            return self.copy(i)
        end = self.next_sig(self.next_sig(i + 1) + 1)  # type: ignore[operator]
        for k in range(i, end + 1):  # type: ignore[operator]
            if not self.toks[k].trivia:
                self.copy(k)
        return end + 1  # type: ignore[operator]

    # --- expressions ----------------------------------------------------------------------------------------------
    def parse(self, i: int) -> tuple[Node, int]:
        parser = Parser(self.toks, self.hi, self.em.param_number)
        parser.i = i
        node = parser.expr()
        return node, parser.i

    def value(self, lo: int, hi: int) -> Typed:
        """The range [lo, hi) as one expression, typed."""
        start = self.next_sig(lo)
        node, end = self.parse(start if start is not None else lo)
        rest = self.next_sig(end)
        if rest is not None and rest < hi:
            raise D1Unsupported(f"unexpected {self.toks[rest].text!r} after a value")
        return self.ex.emit(node)

    def expression(self, i: int) -> int:
        node, end = self.parse(i)
        clause = self.clause
        self.expect_item = False
        if clause == "expr":
            self.out.append(self.ex.condition(node))
        elif clause == "order":
            end = self.order_item(node, end)
        elif clause in ("group", "partition"):
            self.out.append(self.group_item(node))
        elif clause in ("select", "returning"):
            self.out.append(self.result_item(node, end))
        else:
            self.out.append(self.ex.emit(node).sql)
        return end

    def result_item(self, node: Node, end: int) -> str:
        e = self.ex.emit(node)
        self._distinct_dyn = self._distinct_dyn or (self.distinct and e.t == "dyn")
        self._aggregated = self._aggregated or aggregates(node)
        if self.variant_columns and e.t not in ("dyn", "null"):
            e = Typed(f"CAST({e.sql} AS VARIANT)", "dyn")
        self.arms[-1].append(e)
        alias = self._alias_after(end)
        if alias is not None:
            self.aliases[alias.lower()] = e
        elif isinstance(node, Column):
            self.aliases.setdefault(node.names[-1].lower(), e)
        if self.wrap and e.t in ("dyn", "any"):
            named = f' AS "{node.names[-1]}"' if alias is None and isinstance(node, Column) else ""
            return f"__sq_out(CAST({e.sql} AS VARIANT)){named}"
        return e.sql

    def _alias_after(self, end: int) -> str | None:
        k = self.next_sig(end)
        if k is not None and self.toks[k].is_word("AS"):
            k = self.next_sig(k + 1)
        if k is not None and self.toks[k].kind in ("word", "qident") and self.toks[k].upper not in STOP_WORDS:
            return self.toks[k].name
        return None

    def order_item(self, node: Node, end: int) -> int:
        direction = []
        k = self.next_sig(end)
        while k is not None and self.toks[k].is_word(*DIRECTION):
            direction.append(self.toks[k].upper)
            end = k + 1
            k = self.next_sig(end)
        suffix = (" " + " ".join(direction)) if direction else ""
        if _position(node):
            position = node.value  # type: ignore[attr-defined]
            item = self._positional(position)
            keys = sort_keys(item) if item is not None and self.wrap and item.t in ("dyn", "any") else [str(position)]
            self.out.append(", ".join(key + suffix for key in keys))
            return end
        e = self._order_value(node)
        self.out.append(", ".join(key + suffix for key in sort_keys(e)))
        return end

    def _order_value(self, node: Node) -> Typed:
        if isinstance(node, Column) and len(node.names) == 1 and node.names[0].lower() in self.aliases:
            alias = self.aliases[node.names[0].lower()]
            if self.wrap and alias.t in ("dyn", "any"):
                return alias  # the output column is a struct: sort by the value itself
            return Typed(node.text, alias.t, alias.aff, alias.coll, alias.col_coll)
        return self.ex.emit(node)

    def _positional(self, position: int) -> Typed | None:
        columns = self.arms[0]
        item = columns[position - 1] if 0 < position <= len(columns) else None
        if item is not None and item.t == "dyn" and not self.wrap:
            raise D1Unsupported(
                f"ORDER BY {position}, a column of mixed types, on the DuckDB engine; ORDER BY the expression itself"
            )
        return item if item is not None and item.sql != "*" else None

    def group_item(self, node: Node) -> str:
        if _position(node) and self.clause == "group":
            return str(node.value)  # type: ignore[attr-defined]
        e = self._order_value(node) if self.clause == "group" else self.ex.emit(node)
        if e.t == "dyn":
            raise D1Unsupported(
                f"{self.clause.upper()} BY a value of mixed types on the DuckDB engine; CAST it to one type"
            )
        if e.t == "text" and (e.coll or e.col_coll) in ("NOCASE", "RTRIM"):
            raise D1Unsupported(f"{self.clause.upper()} BY a {e.coll or e.col_coll} text on the DuckDB engine; "
                                "group by lower() or rtrim() of it")
        return e.sql

    # --- clauses that are not expression lists --------------------------------------------------------------------
    def from_item(self, i: int, tok: Token) -> int:
        if tok.kind == "op" and tok.text == "(":
            first = self.next_sig(i + 1)
            if first is not None and self.toks[first].is_word("SELECT", "WITH", "VALUES"):
                return self.nested(i)
            if self.clause == "conflict":
                return self.copy_group(i)
            return self.nested(i, "from")
        nxt = self.next_sig(i + 1)
        if json_table.is_call(self.toks, i, nxt):
            return self._json_table(i, nxt)  # type: ignore[arg-type]
        if tok.kind in ("word", "qident") and nxt is not None and self.toks[nxt].text == "(":
            self.copy(i)  # a table-valued function (json_each, json_tree): its arguments may bind parameters
            close = self.closing(nxt)
            self.out.append("(" + self.em.legacy(self.toks, nxt + 1, close) + ")")
            return close + 1
        return self.copy(i)

    def _json_table(self, i: int, open_i: int) -> int:
        """json_each(...) / json_tree(...): a subquery giving SQLite's rows and column types (json_table.py)."""
        close = self.closing(open_i)
        args = [self.value(lo, hi) for lo, hi in json_table.argument_ranges(self.toks, open_i, close)]
        named = json_table.alias(self.toks, close + 1, self.hi) is not None
        columns = json_table.named_columns(self.toks)
        self.out.append(json_table.from_item(self.toks[i].text.lower(), args, named, columns))
        return close + 1

    def assignment(self, i: int, tok: Token) -> int:
        if tok.kind == "op" and tok.text == ",":
            self.set_column = None
            return self.copy(i)
        if tok.kind == "op" and tok.text == "(" and self.set_column is None:
            raise D1Unsupported("SET (a, b) = (...) on the DuckDB engine; assign each column on its own")
        if tok.kind == "op" and tok.text == "=":
            return self.copy(i)
        if self.set_column is None:
            self.set_column = tok.name
            return self.copy(i)
        node, end = self.parse(i)
        e = self.ex.emit(node)
        target = self.em.store_target
        info = target.column_info(self.set_column) if target is not None else None
        self.out.append(store(self.ex, e, info, f"{target.name}.{self.set_column}") if info and target else e.sql)
        return end

    def values(self, i: int, tok: Token) -> int:
        if tok.kind == "op" and tok.text == "(":
            rows, end = self._rows(i)
            self.out.append(", ".join("(" + ", ".join(row) + ")" for row in rows))
            return end
        return self.copy(i)

    def _rows(self, i: int) -> tuple[list[list[str]], int]:
        """VALUES (...), (...): each column written so DuckDB keeps SQLite's type per row."""
        rows: list[list[Typed]] = []
        k: int | None = i
        end = i
        while k is not None and self.toks[k].text == "(":
            close = self.closing(k)
            row = []
            j = self.next_sig(k + 1)
            while j is not None and j < close:
                node, after = self.parse(j)
                row.append(self.ex.emit(node))
                j = self.next_sig(after)
                if j is not None and self.toks[j].text == ",":
                    j = self.next_sig(j + 1)
            rows.append(row)
            end = close + 1
            comma = self.next_sig(end)
            if comma is None or self.toks[comma].text != ",":
                break
            k = self.next_sig(comma + 1)
            if k is None or self.toks[k].text != "(":
                break
            end = k
        width = max(len(r) for r in rows)
        kinds = [self.ex.unify([r[c] for r in rows if c < len(r)]) for c in range(width)]
        if self.variant_columns:
            kinds = [([f"CAST({v} AS VARIANT)" for v in sqls], "dyn") for sqls, _ in kinds]
        self.arms[-1].extend(Typed("", t) for _, t in kinds)
        return [[kinds[c][0][n] for c in range(len(r))] for n, r in enumerate(rows)], end

    def definition(self, i: int, tok: Token) -> int:
        """WITH name [(columns)] AS (select), ...; WINDOW name AS (spec), ..."""
        if tok.kind == "op" and tok.text == "(":
            prev = next((t for t in reversed(self.out) if t.strip()), "")
            if prev.upper() in ("AS", "MATERIALIZED"):
                if self.clause == "window_def":
                    return self.nested(i, "window")
                close = self.closing(i)
                body = Walker(self.em, self.toks, i + 1, close, "auto", self.depth + 1)
                if any(t.is_word("RECURSIVE") for t in self.toks[self.lo:i]) and body._compound():
                    body.variant_columns = True
                    body.cte_columns = self._cte_head(i)
                self.out.append("(" + body.write() + ")")
                return close + 1
            return self.copy_group(i)
        return self.copy(i)

    def _cte_head(self, open_i: int) -> tuple[str, ...]:
        """`name (a, b) AS (`: the CTE's name and its listed columns, or () where it lists none."""
        sig = [t for t in self.toks[self.lo:open_i] if not t.trivia]
        while sig and sig[-1].is_word("AS", "MATERIALIZED", "NOT"):
            sig.pop()
        if not sig or sig[-1].text != ")":
            return ()
        opening = max(k for k, t in enumerate(sig) if t.text == "(")
        columns = [t.name for t in sig[opening + 1:-1] if t.kind in ("word", "qident")]
        return (sig[opening - 1].name, *columns) if opening > 0 else ()

    def next_arm(self) -> None:
        """A compound's next SELECT begins. In a recursive CTE's body the anchor is then written: where its
        columns have no affinity (literals, expressions), the CTE's columns have none either, which the step's
        comparisons need to know."""
        if len(self.arms) == 1 and len(self.cte_columns) == len(self.arms[0]) + 1:
            name, *columns = self.cte_columns
            for column, typed in zip(columns, self.arms[0], strict=True):
                if typed.aff == "":
                    info = ColumnInfo("VARIANT", "")
                    self.em.scope.derived.setdefault(column.lower(), info)
                    self.em.scope.derived.setdefault(f"{name}.{column}".lower(), info)
        self._settle_distinct()
        self.arms.append([])

    def _settle_distinct(self) -> None:
        one_row = not self._from or (self._aggregated and not self._grouped)
        if self._distinct_dyn and not one_row:
            raise D1Unsupported(
                "SELECT DISTINCT over values of mixed types on the DuckDB engine; CAST them to one type"
            )
        self._distinct_dyn = self._aggregated = self._from = self._grouped = False

    def _check_arms(self) -> None:
        if len(self.arms) < 2:
            return
        for n in range(len(self.arms[0])):
            kinds = {arm[n].t for arm in self.arms if n < len(arm)} - {"null"}
            if self.deduplicated and kinds & {"dyn"}:
                raise D1Unsupported(
                    "UNION, EXCEPT or INTERSECT over values of mixed types on the DuckDB engine: SQLite compares 1 and "
                    "1.0 as equal, DuckDB's comparison of such values would not; CAST them to one type or UNION ALL"
                )
            if len(kinds) > 1 and not kinds <= {"int", "bool"}:
                raise D1Unsupported(
                    f"a compound SELECT whose column {n + 1} has values of different types ({', '.join(sorted(kinds))})"
                    " in its parts: SQLite keeps each row's type, DuckDB would convert them; CAST them to one type"
                )


def _position(node: Node) -> bool:
    """A result column's position (ORDER BY 2): an integer literal SQLite reads as one (it fits in 32 bits; a
    larger one is a constant, which orders nothing)."""
    return isinstance(node, Lit) and node.kind == "int" and -(2**31) <= node.value < 2**31  # type: ignore[operator]
