"""The tree of a SQLite expression, as the parser (parser.py) builds it and the typed emitter (typed.py)
writes it: literals, parameters, column references, operators, CASE, CAST, calls, subqueries (token ranges)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass

AGGREGATES = frozenset({"count", "sum", "total", "avg", "min", "max", "group_concat"})


class Node:
    __slots__ = ()


@dataclass(slots=True)
class Lit(Node):
    kind: str  # int, real, text, blob, null; bigint: an integer literal beyond 64 bits (SQLite reads a REAL)
    value: object
    zero_token: bool = False  # an integer token worth 0 (`0`, `0x0`): SQLite's parser folds `0 AND x` on it


@dataclass(slots=True)
class Param(Node):
    number: int  # 1-based, SQLite's numbering of ? and ?NNN


@dataclass(slots=True)
class Column(Node):
    names: tuple[str, ...]  # [table.]column as written (quotes removed)
    text: str  # the reference as DuckDB should read it


@dataclass(slots=True)
class Now(Node):
    word: str  # CURRENT_TIMESTAMP, CURRENT_DATE, CURRENT_TIME


@dataclass(slots=True)
class Unary(Node):
    op: str  # -, +, ~, NOT
    operand: Node


@dataclass(slots=True)
class Binary(Node):
    op: str  # arithmetic, ||, ->, ->>, bitwise, comparisons (= <> < <= > >= IS, IS NOT), AND, OR
    left: Node
    right: Node


@dataclass(slots=True)
class Like(Node):
    op: str  # LIKE, GLOB, MATCH, REGEXP
    negated: bool
    operand: Node
    pattern: Node
    escape: Node | None = None


@dataclass(slots=True)
class Between(Node):
    negated: bool
    operand: Node
    low: Node
    high: Node


@dataclass(slots=True)
class InList(Node):
    negated: bool
    operand: Node
    items: list[Node]


@dataclass(slots=True)
class InSelect(Node):
    negated: bool
    operand: Node
    select: Sub


@dataclass(slots=True)
class NullTest(Node):
    negated: bool  # True: NOTNULL / NOT NULL / IS NOT NULL
    operand: Node


@dataclass(slots=True)
class Truth(Node):
    negated: bool
    operand: Node
    value: bool  # x IS [NOT] TRUE / FALSE


@dataclass(slots=True)
class Case(Node):
    base: Node | None
    whens: list[tuple[Node, Node]]
    default: Node | None


@dataclass(slots=True)
class Cast(Node):
    operand: Node
    type_name: str


@dataclass(slots=True)
class Collate(Node):
    operand: Node
    collation: str


@dataclass(slots=True)
class Sub(Node):
    lo: int  # the statement's token range inside the parentheses
    hi: int
    exists: bool = False


@dataclass(slots=True)
class Row(Node):
    items: list[Node]


@dataclass(slots=True)
class Call(Node):
    name: str  # lower case
    args: list[Node] = field(default_factory=list)
    distinct: bool = False
    star: bool = False
    filter: Node | None = None
    over: tuple[int, int] | str | None = None  # a window's token range (inside its parentheses) or its name


def aggregates(node: object) -> bool:
    """The expression calls an aggregate of its own SELECT (not a window function, not in a subquery)."""
    if isinstance(node, Sub):
        return False
    if isinstance(node, Call) and node.over is None and node.name in AGGREGATES and (
        node.name not in ("max", "min") or len(node.args) == 1
    ):
        return True
    if isinstance(node, Node) and is_dataclass(node):
        return any(aggregates(getattr(node, f.name)) for f in fields(node))
    if isinstance(node, (list, tuple)):
        return any(aggregates(item) for item in node)
    return False
