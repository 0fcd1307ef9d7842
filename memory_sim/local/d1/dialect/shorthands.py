"""SQLite shorthands DuckDB lacks, spelled out at the token level before a statement is translated.

Both run only after the schema mirror compiled the statement with SQLite (duckdb_engine), so what SQLite refuses
(an index that does not exist or cannot serve the query, a table of more than one column after IN) has already
failed with SQLite's own error; what is left is what SQLite answers:
- `x IN t` (a table or view name) is `x IN (SELECT * FROM t)`;
- `FROM t INDEXED BY i` and `FROM t NOT INDEXED` are planner hints that never change an answer: dropped;
- `UPDATE t SET x = 1, x = 2` assigns the rightmost value (DuckDB refuses a column assigned twice): the others go.
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
    if toks and toks[0].is_word("UPDATE"):
        toks = _last_assignments(toks)
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


_SET_ENDS = frozenset({"FROM", "WHERE", "RETURNING", "ORDER", "LIMIT"})


def _last_assignments(toks: list[Token]) -> list[Token]:
    """Of `SET a = ..., a = ...`, only the rightmost assignment of each column stays."""
    start = next((i for i, t in enumerate(toks) if t.is_word("SET")), None)
    if start is None:
        return toks
    parts: list[tuple[int, int]] = []  # [begin, end) of each assignment, commas excluded
    depth, begin, end = 0, start + 1, len(toks)
    for i in range(start + 1, len(toks)):
        tok = toks[i]
        if tok.kind == "op" and tok.text in ("(", ")"):
            depth += 1 if tok.text == "(" else -1
        elif depth == 0 and tok.kind == "op" and tok.text == ",":
            parts.append((begin, i))
            begin = i + 1
        elif depth == 0 and tok.kind == "word" and tok.upper in _SET_ENDS:
            end = i
            break
    parts.append((begin, end))
    columns = [next((t.name.casefold() for t in toks[b:e] if not t.trivia and t.kind in _NAMES), None)
               for b, e in parts]
    later = {name: n for n, name in enumerate(columns)}
    dropped = [n for n, name in enumerate(columns) if name is not None and later[name] != n]
    if not dropped:
        return toks
    keep = [n for n in range(len(parts)) if n not in dropped]
    out = list(toks[: start + 1])
    for k, n in enumerate(keep):
        if k:
            out.append(Token("op", ","))
        out.extend(toks[parts[n][0] : parts[n][1]])
    return out + list(toks[end:])
