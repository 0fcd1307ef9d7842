"""SQLite shorthands DuckDB lacks, spelled out at the token level before a statement is translated.

Both run only after the schema mirror compiled the statement with SQLite (duckdb_engine), so what SQLite refuses
(an index that does not exist or cannot serve the query, a table of more than one column after IN) has already
failed with SQLite's own error; what is left is what SQLite answers:
- `x IN t` (a table or view name) is `x IN (SELECT * FROM t)`;
- `FROM t INDEXED BY i` and `FROM t NOT INDEXED` are planner hints that never change an answer: dropped.
"""

from __future__ import annotations

from memory_sim.bindings.d1_sql import Token

_NAMES = ("word", "qident")
# Words after which `NOT INDEXED` would be an expression (`WHERE NOT indexed`), not a hint on a table.
_EXPRESSION_WORDS = frozenset({"WHERE", "AND", "OR", "ON", "WHEN", "THEN", "ELSE", "SELECT", "HAVING", "NOT", "CASE",
                               "BY", "SET", "IS", "IN", "LIKE", "GLOB", "BETWEEN", "DISTINCT", "ALL", "RETURNING"})


def spell_out(toks: list[Token], words: set[str]) -> list[Token]:
    if "INDEXED" in words:
        toks = _without_index_hints(toks)
    if "IN" in words:
        toks = _table_in_lists(toks)
    return toks


def _significant(toks: list[Token]) -> list[int]:
    return [i for i, t in enumerate(toks) if not t.trivia]


def _without_index_hints(toks: list[Token]) -> list[Token]:
    sig = _significant(toks)
    drop: set[int] = set()
    for n, i in enumerate(sig):
        if n == 0 or not toks[i].is_word("INDEXED"):
            continue
        before = toks[sig[n - 1]]
        if before.is_word("NOT") and n >= 2 and _names_a_table(toks[sig[n - 2]]):
            drop.update((sig[n - 1], i))
        elif n + 2 < len(sig) and _names_a_table(before) and toks[sig[n + 1]].is_word("BY"):
            drop.update((i, sig[n + 1], sig[n + 2]))
    return [t for i, t in enumerate(toks) if i not in drop]


def _names_a_table(tok: Token) -> bool:
    return tok.kind == "qident" or (tok.kind == "word" and tok.upper not in _EXPRESSION_WORDS)


def _table_in_lists(toks: list[Token]) -> list[Token]:
    sig = _significant(toks)
    out = list(toks)
    for n in reversed(range(len(sig) - 1)):  # from the end, so earlier indexes stay valid
        name_at = sig[n + 1]
        after = toks[sig[n + 2]] if n + 2 < len(sig) else None
        if not toks[sig[n]].is_word("IN") or toks[name_at].kind not in _NAMES:
            continue
        if after is not None and after.kind == "op" and after.text in ("(", "."):
            continue  # a table-valued function or a schema-qualified name: left to the parser's refusal
        out[name_at : name_at + 1] = [Token("op", "("), Token("word", "SELECT"), Token("ws", " "), Token("op", "*"),
                                      Token("ws", " "), Token("word", "FROM"), Token("ws", " "), toks[name_at],
                                      Token("op", ")")]
    return out
