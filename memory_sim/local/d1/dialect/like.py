"""SQLite's LIKE on DuckDB: case-insensitive for ASCII letters only (SQLite without ICU), where DuckDB's ILIKE
folds all of Unicode. `x [NOT] LIKE p [ESCAPE e]` becomes `[NOT] __sq_like(x, p[, e])`, a macro that lowers only
A-Z on both sides with DuckDB's translate() before a case-sensitive LIKE (see functions.MACROS).
Operands are found by SQLite's precedence: LIKE binds looser than ||, arithmetic and < >, tighter than AND/OR.
"""

from __future__ import annotations

from memory_sim.bindings.d1_sql import Token
from memory_sim.errors import D1Unsupported

_LEFT_STOPS = {"AND", "OR", "NOT", "WHERE", "SELECT", "ON", "WHEN", "THEN", "ELSE", "CASE", "HAVING", "BY", "IS",
               "IN", "BETWEEN", "RETURNING", "SET", "DISTINCT", "ALL", "LIKE", "GLOB", "ESCAPE", "CHECK", "IF"}
_RIGHT_STOPS = {"AND", "OR", "THEN", "WHEN", "ELSE", "END", "ORDER", "GROUP", "LIMIT", "OFFSET", "HAVING", "ESCAPE",
                "FROM", "WHERE", "UNION", "EXCEPT", "INTERSECT", "AS", "ASC", "DESC", "COLLATE", "IS", "NOT", "IN",
                "LIKE", "GLOB", "BETWEEN", "RETURNING", "WINDOW", "ON", "JOIN", "LEFT", "INNER", "CROSS", "USING"}
_OP_STOPS = {",", "=", "==", "!=", "<>", ";"}


def like_calls(toks: list[Token]) -> list[Token]:
    """Rewrite every LIKE in the token list into a __sq_like call."""
    while True:
        at = next((i for i, t in enumerate(toks) if t.is_word("LIKE")), None)
        if at is None:
            return toks
        toks = _rewrite(toks, at)


def _rewrite(toks: list[Token], at: int) -> list[Token]:
    before = _prev(toks, at - 1)
    negated = before is not None and toks[before].is_word("NOT")
    left_end = before if before is not None and negated else at
    lo = _left_start(toks, left_end - 1)
    hi, stop = _right_end(toks, at + 1)
    args = [toks[lo:left_end], toks[at + 1 : hi]]
    end = hi
    if stop is not None and toks[stop].is_word("ESCAPE"):
        esc_hi, _ = _right_end(toks, stop + 1)
        args.append(toks[stop + 1 : esc_hi])
        end = esc_hi
    if any(not [t for t in arg if not t.trivia] for arg in args):
        raise D1Unsupported("LIKE without an operand")
    call: list[Token] = [Token("word", "NOT"), Token("ws", " ")] if negated else []
    call += [Token("word", "__sq_like"), Token("op", "(")]
    for n, arg in enumerate(args):
        call += ([Token("op", ",")] if n else []) + arg
    call.append(Token("op", ")"))
    return toks[:lo] + call + toks[end:]


def _prev(toks: list[Token], i: int) -> int | None:
    while i >= 0 and toks[i].trivia:
        i -= 1
    return i if i >= 0 else None


def _left_start(toks: list[Token], i: int) -> int:
    """Index where the left operand ending at i begins."""
    start = i + 1
    while i >= 0:
        tok = toks[i]
        if tok.trivia:
            i -= 1
            continue
        if tok.kind == "op" and tok.text == ")":
            i = _back_over(toks, i, "(", ")")
        elif tok.is_word("END"):
            i = _back_over(toks, i, "CASE", "END")
        elif (tok.kind == "op" and (tok.text in _OP_STOPS or tok.text == "(")) or (
            tok.kind == "word" and tok.upper in _LEFT_STOPS
        ):
            break
        start = i
        i -= 1
    return start


def _back_over(toks: list[Token], i: int, opener: str, closer: str) -> int:
    depth = 0
    while i >= 0:
        if _is(toks[i], closer):
            depth += 1
        elif _is(toks[i], opener):
            depth -= 1
            if depth == 0:
                return i
        i -= 1
    raise D1Unsupported("unbalanced parentheses around LIKE")


def _right_end(toks: list[Token], i: int) -> tuple[int, int | None]:
    """(end of the right operand starting at i, index of the token that stopped it or None)."""
    while i < len(toks):
        tok = toks[i]
        if tok.kind == "op" and tok.text == "(":
            i = _forward_over(toks, i, "(", ")")
        elif tok.is_word("CASE"):
            i = _forward_over(toks, i, "CASE", "END")
        elif (tok.kind == "op" and (tok.text in _OP_STOPS or tok.text == ")")) or (
            tok.kind == "word" and tok.upper in _RIGHT_STOPS
        ):
            return i, i
        i += 1
    return len(toks), None


def _forward_over(toks: list[Token], i: int, opener: str, closer: str) -> int:
    depth = 0
    while i < len(toks):
        if _is(toks[i], opener):
            depth += 1
        elif _is(toks[i], closer):
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise D1Unsupported("unbalanced parentheses around LIKE")


def _is(tok: Token, text: str) -> bool:
    return tok.is_word(text) if text.isalpha() else (tok.kind == "op" and tok.text == text)
