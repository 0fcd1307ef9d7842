"""SQLite expressions as a small tree, parsed from the dialect layer's tokens with SQLite's operator precedence
(which is not DuckDB's: `1 + 2 || 'x'` is `1 + (2 || 'x')` in SQLite). The typed emitter (typed.py) writes
the tree back as DuckDB SQL with SQLite's meaning; subqueries, window specifications and anything the tree does
not model stay token ranges, written by the statement layer.
"""

from __future__ import annotations

from collections.abc import Callable

from memory_sim.bindings.d1_sql import Token
from memory_sim.errors import D1Unsupported
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
)

INT64_MAX = 2**63 - 1


_EQUALITY, _RELATIONAL, _BITWISE, _ADDITIVE, _MULTIPLICATIVE, _CONCAT = 4, 5, 6, 7, 8, 9
_BINARY_OPS = {
    "||": _CONCAT, "->": _CONCAT, "->>": _CONCAT, "*": _MULTIPLICATIVE, "/": _MULTIPLICATIVE, "%": _MULTIPLICATIVE,
    "+": _ADDITIVE, "-": _ADDITIVE, "&": _BITWISE, "|": _BITWISE, "<<": _BITWISE, ">>": _BITWISE,
    "<": _RELATIONAL, "<=": _RELATIONAL, ">": _RELATIONAL, ">=": _RELATIONAL,
    "=": _EQUALITY, "==": _EQUALITY, "!=": _EQUALITY, "<>": _EQUALITY,
}
_NORMAL = {"==": "=", "!=": "<>"}
_LIKE_WORDS = ("LIKE", "GLOB", "MATCH", "REGEXP")
NOW_WORDS = ("CURRENT_TIMESTAMP", "CURRENT_DATE", "CURRENT_TIME")
# Words that cannot begin an expression (clause keywords); any other word may be a name or a function.
STOP_WORDS = frozenset(
    "FROM WHERE GROUP ORDER HAVING LIMIT OFFSET UNION EXCEPT INTERSECT AS ASC DESC ON USING JOIN INNER LEFT RIGHT "
    "FULL OUTER CROSS NATURAL WINDOW RETURNING SET VALUES THEN WHEN ELSE END AND OR IS IN LIKE GLOB MATCH REGEXP "
    "BETWEEN ESCAPE COLLATE ISNULL NOTNULL SELECT INTO DO FILTER OVER BY DISTINCT ALL INSERT UPDATE DELETE WITH".split()
)


class Parser:
    """Parses expressions out of a token list (trivia skipped) between `lo` and `hi`."""

    def __init__(self, toks: list[Token], hi: int, next_param: Callable[[Token], int]) -> None:
        self.toks = toks
        self.hi = hi
        self.next_param = next_param
        self.i = 0

    # --- cursor ---------------------------------------------------------------------------------------------
    def at(self, i: int | None = None) -> Token | None:
        i = self._skip(self.i if i is None else i)
        return self.toks[i] if i < self.hi else None

    def _skip(self, i: int) -> int:
        while i < self.hi and self.toks[i].trivia:
            i += 1
        return i

    def take(self) -> Token:
        self.i = self._skip(self.i)
        if self.i >= self.hi:
            raise D1Unsupported("an incomplete expression")
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def word(self, *words: str) -> bool:
        tok = self.at()
        return tok is not None and tok.is_word(*words)

    def op(self, *ops: str) -> bool:
        tok = self.at()
        return tok is not None and tok.kind == "op" and tok.text in ops

    def peek_word(self, offset: int, *words: str) -> bool:
        i = self._skip(self.i)
        for _ in range(offset):
            i = self._skip(i + 1)
        return i < self.hi and self.toks[i].is_word(*words)

    def expect(self, text: str) -> None:
        tok = self.take()
        if tok.text.upper() != text:
            raise D1Unsupported(f"expected {text} near {tok.text!r}")

    def closing(self, open_i: int) -> int:
        depth = 0
        for i in range(open_i, self.hi):
            tok = self.toks[i]
            if tok.kind == "op" and tok.text == "(":
                depth += 1
            elif tok.kind == "op" and tok.text == ")":
                depth -= 1
                if depth == 0:
                    return i
        raise D1Unsupported("unbalanced parentheses")

    # --- expressions ----------------------------------------------------------------------------------------
    def expr(self, min_bp: int = 1) -> Node:
        left = self.prefix()
        while True:
            step = self.infix(left, min_bp)
            if step is None:
                return left
            left = step

    def infix(self, left: Node, min_bp: int) -> Node | None:
        tok = self.at()
        if tok is None:
            return None
        if tok.kind == "op" and tok.text in _BINARY_OPS:
            bp = _BINARY_OPS[tok.text]
            if bp < min_bp:
                return None
            self.take()
            return Binary(_NORMAL.get(tok.text, tok.text), left, self.expr(bp + 1))
        if tok.kind != "word":
            return None
        upper = tok.upper
        if upper == "COLLATE" and min_bp <= 10:
            self.take()
            return Collate(left, self.take().text.strip('"`[]').upper())
        if upper in ("AND", "OR"):
            bp = 2 if upper == "AND" else 1
            if bp < min_bp:
                return None
            self.take()
            return Binary(upper, left, self.expr(bp + 1))
        if min_bp > _EQUALITY:
            return None
        negated = upper == "NOT"
        if negated and not self.peek_word(1, "LIKE", "GLOB", "MATCH", "REGEXP", "IN", "BETWEEN", "NULL"):
            return None
        if upper in ("ISNULL", "NOTNULL"):
            self.take()
            return NullTest(upper == "NOTNULL", left)
        if upper == "IS":
            return self.is_(left)
        if upper not in ("NOT", "IN", "BETWEEN") and upper not in _LIKE_WORDS:
            return None
        self.take()
        if negated:
            upper = self.take().upper
        if upper == "NULL":
            return NullTest(True, left)
        if upper in _LIKE_WORDS:
            pattern = self.expr(_RELATIONAL)
            escape = None
            if self.word("ESCAPE"):
                self.take()
                escape = self.expr(_RELATIONAL)
            return Like(upper, negated, left, pattern, escape)
        if upper == "BETWEEN":
            low = self.expr(3)  # anything short of AND (SQLite's grammar brackets it with BETWEEN ... AND)
            self.expect("AND")
            return Between(negated, left, low, self.expr(_RELATIONAL))
        return self.in_(left, negated)

    def is_(self, left: Node) -> Node:
        self.take()
        negated = False
        if self.word("NOT"):
            self.take()
            negated = True
        if self.word("DISTINCT"):
            self.take()
            self.expect("FROM")
            negated = not negated
        if self.word("NULL") and not self._continues_after_null():
            self.take()
            return NullTest(negated, left)
        if self.word("TRUE", "FALSE"):
            return Truth(negated, left, self.take().upper == "TRUE")
        return Binary("IS NOT" if negated else "IS", left, self.expr(_EQUALITY + 1))

    def _continues_after_null(self) -> bool:
        i = self._skip(self._skip(self.i) + 1)
        return i < self.hi and self.toks[i].kind == "op" and self.toks[i].text in _BINARY_OPS

    def in_(self, left: Node, negated: bool) -> Node:
        tok = self.at()
        if tok is None or tok.kind != "op" or tok.text != "(":
            raise D1Unsupported("IN with a table name on the DuckDB engine; write IN (SELECT ... FROM table)")
        open_i = self._skip(self.i)
        close = self.closing(open_i)
        first = self.at(open_i + 1)
        if first is not None and first.is_word("SELECT", "WITH", "VALUES"):
            self.i = close + 1
            return InSelect(negated, left, Sub(open_i + 1, close))
        self.take()
        items: list[Node] = []
        while not self.op(")"):
            items.append(self.expr())
            if self.op(","):
                self.take()
        self.take()
        return InList(negated, left, items)

    def prefix(self) -> Node:
        tok = self.take()
        kind = tok.kind
        if kind == "number":
            return number(tok.text)
        if kind == "string":
            return Lit("text", tok.text[1:-1].replace("''", "'"))
        if kind == "blob":
            return Lit("blob", bytes.fromhex(tok.text[2:-1]))
        if kind == "param":
            return Param(self.next_param(tok))
        if kind == "op":
            return self.operator_prefix(tok)
        if kind == "qident":
            return self.column(tok)
        if kind != "word":
            raise D1Unsupported(f"unexpected {tok.text!r} in an expression")
        return self.word_prefix(tok)

    def operator_prefix(self, tok: Token) -> Node:
        if tok.text == "(":
            open_i = self.i - 1
            first = self.at()
            if first is not None and first.is_word("SELECT", "WITH", "VALUES"):
                close = self.closing(open_i)
                self.i = close + 1
                return Sub(open_i + 1, close)
            items = [self.expr()]
            while self.op(","):
                self.take()
                items.append(self.expr())
            self.expect(")")
            return items[0] if len(items) == 1 else Row(items)
        if tok.text in ("-", "+", "~"):
            operand = self.expr(11)
            if tok.text == "-" and isinstance(operand, Lit) and operand.kind in ("int", "real", "bigint"):
                return negative(operand)
            return Unary(tok.text, operand)
        raise D1Unsupported(f"unexpected {tok.text!r} in an expression")

    def word_prefix(self, tok: Token) -> Node:
        upper = tok.upper
        if upper == "NULL":
            return Lit("null", None)
        if upper in NOW_WORDS:
            return Now(upper)
        if upper == "NOT":
            if self.word("EXISTS"):
                self.take()
                return Unary("NOT", self.exists())
            return Unary("NOT", self.expr(_EQUALITY))
        if upper == "EXISTS":
            return self.exists()
        if upper == "CASE":
            return self.case()
        if upper == "CAST" and self.op("("):
            return self.cast()
        if upper == "RAISE":
            raise D1Unsupported("RAISE() belongs to triggers, which the DuckDB engine does not run")
        if self.op("("):
            return self.call(tok.text.lower())
        if upper in ("TRUE", "FALSE"):
            return Lit("int", 1 if upper == "TRUE" else 0)
        return self.column(tok)

    def column(self, first: Token) -> Column:
        names = [first.name]
        parts = [_reference(first)]
        while self.op(".") and self.at(self._skip(self.i) + 1) is not None:
            nxt = self.at(self._skip(self.i) + 1)
            if nxt is None or nxt.kind not in ("word", "qident"):
                break
            self.take()
            tok = self.take()
            names.append(tok.name)
            parts.append(_reference(tok))
        return Column(tuple(names), ".".join(parts))

    def exists(self) -> Sub:
        tok = self.at()
        if tok is None or tok.text != "(":
            raise D1Unsupported("EXISTS without a subquery")
        open_i = self._skip(self.i)
        close = self.closing(open_i)
        self.i = close + 1
        return Sub(open_i + 1, close, exists=True)

    def case(self) -> Case:
        base = None if self.word("WHEN") else self.expr()
        whens = []
        while self.word("WHEN"):
            self.take()
            cond = self.expr()
            self.expect("THEN")
            whens.append((cond, self.expr()))
        default = None
        if self.word("ELSE"):
            self.take()
            default = self.expr()
        self.expect("END")
        return Case(base, whens, default)

    def cast(self) -> Cast:
        self.take()
        operand = self.expr()
        self.expect("AS")
        words = []
        depth = 0
        while True:
            tok = self.take()
            if tok.kind == "op" and tok.text == ")" and depth == 0:
                break
            depth += (tok.text == "(") - (tok.text == ")") if tok.kind == "op" else 0
            words.append(tok.text)
        return Cast(operand, " ".join(words))

    def call(self, name: str) -> Call:
        self.take()
        node = Call(name)
        if self.op("*"):
            self.take()
            node.star = True
        elif self.word("DISTINCT", "ALL"):
            node.distinct = self.take().upper == "DISTINCT"
        if not node.star:
            while not self.op(")"):
                node.args.append(self.expr())
                if self.op(","):
                    self.take()
        self.expect(")")
        if self.word("FILTER"):
            self.take()
            self.expect("(")
            self.expect("WHERE")
            node.filter = self.expr()
            self.expect(")")
        if self.word("OVER"):
            self.take()
            tok = self.at()
            if tok is not None and tok.text == "(":
                open_i = self._skip(self.i)
                close = self.closing(open_i)
                node.over = (open_i + 1, close)
                self.i = close + 1
            else:
                node.over = self.take().text
        return node


def _reference(tok: Token) -> str:
    from memory_sim.local.d1.dialect.schema import DUCKDB_ONLY_KEYWORDS

    if tok.kind == "qident" or tok.upper in DUCKDB_ONLY_KEYWORDS:
        return '"' + tok.name.replace('"', '""') + '"'
    return tok.text


def number(text: str) -> Lit:
    """A numeric literal as SQLite reads it: hex is a 64-bit two's complement INTEGER, an integer too large for
    64 bits is a REAL, anything with a point or exponent is a REAL."""
    if text[:2].lower() == "0x":
        digits = text[2:]
        if len(digits.lstrip("0")) > 16:
            raise D1Unsupported(f"hex literal too big: {text}")  # SQLite's own words, at parse time
        value = int(digits, 16)
        return Lit("int", value - 2**64 if value > INT64_MAX else value, zero_token=value == 0)
    if "." in text or "e" in text or "E" in text:  # not any() over a generator: this runs on every literal
        return Lit("real", float(text))
    value = int(text)
    if value > INT64_MAX:
        return Lit("bigint", value)  # a REAL, unless negated
    return Lit("int", value, zero_token=value == 0)


def negative(lit: Lit) -> Lit:
    """`-literal`: -9223372036854775808 is SQLite's one INTEGER literal whose digits do not fit on their own."""
    value = -lit.value  # type: ignore[operator]
    if lit.kind == "bigint":
        return Lit("int", value) if value >= -(2**63) else Lit("bigint", value)
    return Lit(lit.kind, value)
