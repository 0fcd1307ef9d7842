"""The keywords the statement walker (clauses.py) acts on, each switching it to the clause it opens, and the
sort keys ORDER BY uses: native for one type, SQLite's class order (numbers exactly, then text, then blobs) for
values of mixed type."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_sim.bindings.d1_sql import Token
from memory_sim.local.d1.dialect.operands import Typed
from memory_sim.local.d1.dialect.parser import STOP_WORDS
from memory_sim.local.d1.dialect.store import count

if TYPE_CHECKING:
    from memory_sim.local.d1.dialect.clauses import Walker

JOIN_WORDS = frozenset({"JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "CROSS", "NATURAL"})
LIST_CLAUSES = ("select", "returning", "order", "group", "partition")
DIRECTION = frozenset({"ASC", "DESC", "NULLS", "FIRST", "LAST"})


def _limit(w: Walker, i: int, tok: Token) -> int:
    """LIMIT count [OFFSET skip], or SQLite's LIMIT skip, count."""
    w.copy(i)
    node, end = w.parse(w.next_sig(i + 1) or i + 1)
    comma = w.next_sig(end)
    if tok.upper == "LIMIT" and comma is not None and w.toks[comma].text == ",":
        second, end = w.parse(w.next_sig(comma + 1) or comma + 1)  # LIMIT offset, count
        w.out.append(" " + count(w.ex, w.ex.emit(second), False))
        w.out.append(" OFFSET " + count(w.ex, w.ex.emit(node), True) + " ")
        return end
    w.out.append(" " + count(w.ex, w.ex.emit(node), tok.upper == "OFFSET") + " ")
    return end


def sort_keys(e: Typed) -> list[str]:
    """ORDER BY keys with SQLite's order: native for one type; class, number (exactly), text, blob for mixed."""
    if e.t == "null":
        return ["CAST(NULL AS BIGINT)"]  # orders nothing; DuckDB refuses a bare NULL key
    if e.t in ("dyn", "any"):
        v = e.sql if e.t == "dyn" else f"CAST({e.sql} AS VARIANT)"
        text = f"__sq_sk_text({v})"
        coll = e.coll or e.col_coll
        if coll == "NOCASE":
            text = f"__sq_nocase({text})"
        return [f"__sq_sk_class({v})", f"__sq_sk_num({v})", f"__sq_sk_int({v})", text, f"__sq_sk_blob({v})"]
    coll = e.coll or e.col_coll
    if e.t == "text" and coll == "NOCASE":
        return [f"__sq_nocase({e.sql})"]
    if e.t == "text" and coll == "RTRIM":
        return [f"rtrim({e.sql}, ' ')"]
    return [e.sql]


def starts_expression(tok: Token) -> bool:
    if tok.kind in ("number", "string", "blob", "param", "qident"):
        return True
    if tok.kind == "op":
        return tok.text in ("(", "-", "+", "~")
    return tok.kind == "word" and tok.upper not in STOP_WORDS


# --- keyword handlers ---------------------------------------------------------------------------------------------
def _set_clause(clause: str, expect: bool = True):  # type: ignore[no-untyped-def]
    def handle(w: Walker, i: int, tok: Token) -> int:
        w.clause, w.expect_item = clause, expect
        return w.copy(i)

    return handle


def _select(w: Walker, i: int, tok: Token) -> int:
    w.clause, w.expect_item, w.distinct = "select", True, False
    w.copy(i)
    k = w.next_sig(i + 1)
    if k is not None and w.toks[k].is_word("DISTINCT", "ALL"):
        w.distinct = w.toks[k].upper == "DISTINCT"
        w.out.append(" ")
        return w.copy(k)
    return i + 1


def _compound(w: Walker, i: int, tok: Token) -> int:
    k = w.next_sig(i + 1)
    if not (tok.is_word("UNION") and k is not None and w.toks[k].is_word("ALL")):
        w.deduplicated = True  # UNION, EXCEPT, INTERSECT compare whole rows
    w.next_arm()
    w.clause = "verbatim"
    return w.copy(i)


def _by(w: Walker, i: int, tok: Token) -> int:
    k = w.next_sig(i + 1)
    if k is None or not w.toks[k].is_word("BY"):
        return w.copy(i)
    w.clause = {"ORDER": "order", "GROUP": "group", "PARTITION": "partition"}[tok.upper]
    w.expect_item = True
    w.copy(i)
    w.out.append(" ")
    return w.copy(k)


def _on(w: Walker, i: int, tok: Token) -> int:
    k = w.next_sig(i + 1)
    if k is not None and w.toks[k].is_word("CONFLICT"):
        w.clause = "conflict"
    else:
        w.clause = "expr"
    return w.copy(i)


def _as(w: Walker, i: int, tok: Token) -> int:
    w.copy(i)
    k = w.next_sig(i + 1)
    if w.clause in LIST_CLAUSES and k is not None and w.toks[k].kind in ("word", "qident", "string"):
        w.out.append(" ")
        return w.copy(k)
    return i + 1


def _update(w: Walker, i: int, tok: Token) -> int:
    w.clause = "from" if w.clause != "conflict" else "conflict"
    return w.copy(i)


def _rows_frame(w: Walker, i: int, tok: Token) -> int:
    if w.clause in ("order", "window", "partition"):
        w.clause = "frame"
    return w.copy(i)


def _verbatim(w: Walker, i: int, tok: Token) -> int:
    return w.copy(i)


CLAUSE_WORDS = frozenset({
    "SELECT", "FROM", "WHERE", "GROUP", "ORDER", "HAVING", "LIMIT", "OFFSET", "UNION", "EXCEPT", "INTERSECT",
    "WINDOW", "RETURNING", "ON", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "CROSS", "NATURAL", "USING",
    "SET", "VALUES", "PARTITION", "ROWS", "RANGE", "GROUPS", "DO",
})
KEYWORDS = {
    "SELECT": _select, "FROM": _set_clause("from"), "WHERE": _set_clause("expr"), "HAVING": _set_clause("expr"),
    "ON": _on, "ORDER": _by, "GROUP": _by, "PARTITION": _by, "LIMIT": _limit, "OFFSET": _limit,
    "SET": _set_clause("set"), "VALUES": _set_clause("values"), "RETURNING": _set_clause("returning"),
    "WITH": _set_clause("cte"), "WINDOW": _set_clause("window_def"), "UNION": _compound, "EXCEPT": _compound,
    "INTERSECT": _compound, "UPDATE": _update, "DO": _set_clause("conflict"), "ROWS": _rows_frame,
    "RANGE": _rows_frame, "GROUPS": _rows_frame, "AS": _as, "USING": _set_clause("verbatim"),
    **{word: _set_clause("from") for word in JOIN_WORDS},
    **{word: _verbatim for word in ("DISTINCT", "ALL", "INTO", "INSERT", "DELETE", "RECURSIVE", "NOTHING",
                                    "CONFLICT", "MATERIALIZED")},
    **{word: _verbatim for word in DIRECTION},
}
