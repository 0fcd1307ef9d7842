"""Result columns as SQLite names them: an unaliased expression of the top-level result list is named by its SQL
text (`max(rowid)`), a column by its name."""

from __future__ import annotations

from memory_sim.bindings.d1_sql import Token
from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect.ast import Column
from memory_sim.local.d1.dialect.expressions import next_significant, split_args
from memory_sim.local.d1.dialect.parser import Parser

_LIST_ENDS = {"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "EXCEPT", "INTERSECT", "WINDOW"}
_NOT_ALIASES = {"END", "NULL", "TRUE", "FALSE", "NOCASE", "BINARY", "RTRIM", "CURRENT_TIMESTAMP", "CURRENT_DATE",
                "CURRENT_TIME", "ASC", "DESC"}


def name_result_columns(toks: list[Token], start_word: str = "SELECT") -> list[Token]:
    """Alias each unaliased expression of the top-level result list with its SQL text, as SQLite names it."""
    depth = 0
    for i, tok in enumerate(toks):
        if tok.kind == "op" and tok.text in "()":
            depth += 1 if tok.text == "(" else -1
        elif depth == 0 and tok.is_word(start_word):
            return _alias_list(toks, i + 1)
    return toks


def _alias_list(toks: list[Token], start: int) -> list[Token]:
    first = next_significant(toks, start)
    if first is not None and toks[first].is_word("DISTINCT", "ALL"):
        start = first + 1
    end = len(toks)
    depth = 0
    for i in range(start, len(toks)):
        tok = toks[i]
        if tok.kind == "op" and tok.text in "()":
            depth += 1 if tok.text == "(" else -1
        elif depth == 0 and tok.kind == "word" and tok.upper in _LIST_ENDS:
            end = i
            break
    out = toks[:start]
    items = split_args(toks, start - 1, end) if end > start else []
    for lo, hi in items:
        item = toks[lo:hi]
        out.extend(item)
        name = _needs_alias(item)
        if name is not None:
            escaped = name.replace('"', '""')
            out.extend([Token("ws", " "), Token("word", "AS"), Token("ws", " "), Token("qident", f'"{escaped}"')])
        out.append(Token("op", ","))
    if items:
        out.pop()
    return out + toks[end:]


def _needs_alias(item: list[Token]) -> str | None:
    """The name SQLite gives an unaliased result expression (its text), or None: a column, `*`, or an item that
    has an alias already (what follows the expression, as SQLite's grammar reads it)."""
    sig = [t for t in item if not t.trivia]
    if not sig or sig[-1].text == "*":
        return None
    parser = Parser(item, len(item), lambda tok: 0)
    try:
        node = parser.expr()
    except D1Unsupported:
        return None
    if any(not t.trivia for t in item[parser.i:]) or isinstance(node, Column):
        return None
    return "".join(t.text for t in item).strip()
