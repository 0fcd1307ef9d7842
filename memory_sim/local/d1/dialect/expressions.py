"""SQLite's dialect on DuckDB: translates one SQLite statement into DuckDB SQL with SQLite's meaning, or
refuses it (D1Unsupported, naming the construct and the SQLite alternative). Cached by (SQL text, schema
version, classes of the bound values): the schema gives each column's type and affinity, and a bound text's
class (does it read as a number?) decides what SQLite makes of it.

Statements are walked clause by clause (clauses.py, keywords.py; INSERT in insert.py, CREATE and
ALTER TABLE in ddl.py, the rest in statements.py); expressions are parsed (parser.py) and written typed
(typed.py, compare.py, calls.py, store.py). This module holds the schema's shape, the emitter
that collects the values the engine binds, and the token-by-token writer DDL pieces still use (`legacy`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memory_sim.bindings.d1_sql import Token, placeholders, tokenize
from memory_sim.errors import D1Unsupported
from memory_sim.local.d1.dialect import functions as fn
from memory_sim.local.d1.dialect.like import like_calls
from memory_sim.local.d1.dialect.operands import SUBQUERY
from memory_sim.local.d1.dialect.schema import DUCKDB_ONLY_KEYWORDS, TableInfo, column_type, quote_name


@dataclass(frozen=True, slots=True)
class Translation:
    sql: str
    kind: str  # "read" (rows), "write" (INSERT/UPDATE/DELETE), "ddl", "mirror" (answered by the schema mirror),
    # "replace" (INSERT OR REPLACE: a plan of `steps` then `sql`, run in one transaction), "noop" (REINDEX)
    returns_rows: bool = True
    extras: tuple[str, ...] = ()  # what to bind as $1, $2, ...: "p:N" the user's ?N, or an engine value (Emitter.extra)
    target: TableInfo | None = None  # rowid table whose ids this INSERT generates
    returning_injected: bool = False  # we appended RETURNING <rowid column> to learn last_row_id
    upsert: bool = False  # ON CONFLICT DO UPDATE: RETURNING also lists updated rows, which are not inserted
    steps: tuple[str, ...] = ()  # kind "replace": statements run before `sql` (replace.py)

    @property
    def hoisted(self) -> tuple[str, ...]:
        """The DuckDB text of each scalar subquery the engine asks before the statement and binds (`SUBQUERY`)."""
        return tuple(name.removeprefix(SUBQUERY) for name in self.extras if name.startswith(SUBQUERY))


@dataclass(slots=True)
class Emitter:
    """Turns a token range into DuckDB text; collects the engine-supplied parameters it needed. Statements and
    expressions go through the typed walker (clauses.py); DDL pieces through `legacy` (token by token)."""

    numbers: tuple[int, ...]
    user_count: int
    extras: list[str] = field(default_factory=list)
    _seen: int = 0
    signature: tuple[str, ...] = ()  # each bound value's class (values.param_class)
    scope: Any = None  # scope.Scope: the statement's tables, for column types
    store_target: TableInfo | None = None  # the table SET clauses write to
    wrap_output: bool = True  # result columns reach the user (not a view's or CREATE TABLE ... AS SELECT's)

    def extra(self, name: str) -> str:
        """The DuckDB parameter for a value the engine binds: `p:N` is the user's ?N, others the engine's own
        ("last_rowid", "id_base", "changes", `kind:N` a view of ?N, `sq:<SQL>` a scalar subquery's value).
        Numbered by first use, so a user value the DuckDB SQL does not need is not bound."""
        if name not in self.extras:
            self.extras.append(name)
        return f"\x00{name}\x00"  # numbered once the statement is written (numbered()); NUL never reaches here

    def param_number(self, tok: Token) -> int:
        number = self.numbers[self._seen]
        self._seen += 1
        return number

    def param_class(self, number: int) -> str:
        return self.signature[number - 1] if number <= len(self.signature) else "n"

    def emit(self, toks: list[Token], lo: int = 0, hi: int | None = None) -> str:
        from memory_sim.local.d1.dialect.clauses import Walker

        return Walker(self, list(toks), lo, len(toks) if hi is None else hi).write()

    def verbatim(self, tok: Token, before: str) -> str:
        """A token that is not part of an expression, as DuckDB should read it."""
        return self._word(tok) if tok.kind == "word" else _as_duckdb_reads_it(tok, before)

    def legacy(self, toks: list[Token], lo: int = 0, hi: int | None = None) -> str:
        hi = len(toks) if hi is None else hi
        if any(t.kind == "op" and t.text == "->>" for t in toks[lo:hi]):
            toks, lo = arrow_calls(toks[lo:hi]), 0
            hi = len(toks)
        if any(t.kind == "word" and t.upper == "LIKE" for t in toks[lo:hi]):
            toks, lo = like_calls(toks[lo:hi]), 0
            hi = len(toks)
        out: list[str] = []
        i = lo
        while i < hi:
            tok = toks[i]
            if tok.kind == "word":
                nxt = next_significant(toks, i + 1, hi)
                if nxt is not None and toks[nxt].text == "(":
                    close = match_paren(toks, nxt)
                    call = self._call(tok.text.lower(), toks, nxt, close)
                    if call is not None:
                        out.append(call)
                        i = close + 1
                        continue
                out.append(self._word(tok))
            elif tok.kind == "param":
                out.append(self.extra(f"p:{self.numbers[self._seen]}"))
                self._seen += 1
            elif tok.kind == "number" and tok.text[:2].lower() == "0x":
                from memory_sim.local.d1.dialect.parser import number

                out.append(str(number(tok.text).value))
            else:
                out.append(_as_duckdb_reads_it(tok, out[-1] if out else ""))
            i += 1
        return "".join(out)

    def _word(self, tok: Token) -> str:
        upper = tok.upper
        if upper in fn.NOW_TEXT:
            return fn.NOW_TEXT[upper]
        if upper in DUCKDB_ONLY_KEYWORDS:
            return f'"{tok.text}"'
        if upper in ("SQLITE_MASTER", "SQLITE_SCHEMA", "SQLITE_SEQUENCE"):
            raise D1Unsupported(f"{tok.text} joined with data tables; query it on its own")
        return tok.text

    def _args(self, toks: list[Token], open_i: int, close_i: int) -> list[str]:
        return [self.legacy(toks, lo, hi).strip() for lo, hi in split_args(toks, open_i, close_i)]

    def _call(self, name: str, toks: list[Token], open_i: int, close_i: int) -> str | None:
        handler = _CALLS.get(name)
        if handler is not None:
            return handler(self, toks, open_i, close_i)
        if name in fn.DELEGATED:
            args = self._args(toks, open_i, close_i)
            if name in fn.NOW_CALLS and (not args or (len(args) == 1 and args[0].lower() == "'now'")):
                return fn.NOW_CALLS[name]
            if len(args) > fn.MAX_DELEGATED_ARGS:
                raise D1Unsupported(f"{name}() with more than {fn.MAX_DELEGATED_ARGS} arguments")
            cast = ", ".join(f"CAST(({a}) AS VARIANT)" for a in args)
            return f"{fn.delegated_name(name, len(args))}({cast})"
        return None


def _as_duckdb_reads_it(tok: Token, before: str) -> str:
    """A token's text such that DuckDB's lexer splits it as SQLite's does: a comment is blank (DuckDB ends `--` at
    a carriage return and nests /* */), a quoted name is double-quoted, and a quote right after a name gets a space
    (DuckDB reads E'...' as an escape string)."""
    if tok.kind == "comment":
        return " "
    text = quote_name(tok.name) if tok.kind == "qident" else tok.text
    if tok.kind in ("qident", "string", "blob") and (before[-1:].isalnum() or before[-1:] in ("_", "$", "&")):
        return " " + text
    return text


def _minmax(name: str) -> Callable[[Emitter, list[Token], int, int], str | None]:
    def handle(em: Emitter, toks: list[Token], open_i: int, close_i: int) -> str | None:
        if len(split_args(toks, open_i, close_i)) < 2:
            return None  # the aggregate
        args = em._args(toks, open_i, close_i)
        if len(args) > 4:
            raise D1Unsupported(f"{name}() with more than 4 arguments; nest {name}() calls")
        return f"__sq_{name}({', '.join(args)})"

    return handle


def _renamed(target: str) -> Callable[[Emitter, list[Token], int, int], str]:
    def handle(em: Emitter, toks: list[Token], open_i: int, close_i: int) -> str:
        return f"{target}({', '.join(em._args(toks, open_i, close_i))})"

    return handle


def _cast(em: Emitter, toks: list[Token], open_i: int, close_i: int) -> str | None:
    as_i = next(
        (i for i in range(open_i + 1, close_i) if toks[i].is_word("AS") and depth_at(toks, open_i, i) == 1), None
    )
    if as_i is None:
        return None
    type_words = " ".join(t.upper for t in toks[as_i + 1 : close_i] if not t.trivia)
    inner = em.emit(toks, open_i + 1, as_i).strip()
    if "INT" in type_words:
        return f"__sq_int({inner})"
    return f"CAST({inner} AS {column_type(type_words)})"


def _last_rowid(em: Emitter, toks: list[Token], open_i: int, close_i: int) -> str:
    return em.extra("last_rowid")


def _refuse(name: str, alternative: str) -> Callable[[Emitter, list[Token], int, int], str]:
    def handle(em: Emitter, toks: list[Token], open_i: int, close_i: int) -> str:
        raise D1Unsupported(f"{name}() is not available on the DuckDB engine; {alternative}")

    return handle


_CALLS: dict[str, Callable[[Emitter, list[Token], int, int], str | None]] = {
    "max": _minmax("max"),
    "min": _minmax("min"),
    "typeof": _renamed("__sq_typeof"),
    "total": _renamed("__sq_total"),
    "iif": _renamed("if"),
    "cast": _cast,
    "last_insert_rowid": _last_rowid,
    "changes": _refuse("changes", "read meta.changes of the result"),
    "total_changes": _refuse("total_changes", "read meta.changes of each result"),
    "random": _refuse("random", "generate random values in the application"),
    "randomblob": _refuse("randomblob", "generate random values in the application"),
    "zeroblob": _refuse("zeroblob", "bind a bytes value"),
}


# --- token helpers --------------------------------------------------------------------------------------------
def next_significant(toks: list[Token], i: int, hi: int | None = None) -> int | None:
    hi = len(toks) if hi is None else hi
    while i < hi:
        if not toks[i].trivia:
            return i
        i += 1
    return None


def match_paren(toks: list[Token], open_i: int) -> int:
    depth = 0
    for i in range(open_i, len(toks)):
        if toks[i].text == "(" and toks[i].kind == "op":
            depth += 1
        elif toks[i].text == ")" and toks[i].kind == "op":
            depth -= 1
            if depth == 0:
                return i
    raise D1Unsupported("unbalanced parentheses")


def depth_at(toks: list[Token], lo: int, at: int) -> int:
    depth = 0
    for i in range(lo, at):
        if toks[i].kind == "op" and toks[i].text == "(":
            depth += 1
        elif toks[i].kind == "op" and toks[i].text == ")":
            depth -= 1
    return depth


def split_args(toks: list[Token], open_i: int, close_i: int) -> list[tuple[int, int]]:
    """Ranges of the comma-separated items between a pair of parentheses."""
    ranges: list[tuple[int, int]] = []
    depth = 0
    start = open_i + 1
    for i in range(open_i + 1, close_i):
        tok = toks[i]
        if tok.kind == "op" and tok.text == "(":
            depth += 1
        elif tok.kind == "op" and tok.text == ")":
            depth -= 1
        elif tok.kind == "op" and tok.text == "," and depth == 0:
            ranges.append((start, i))
            start = i + 1
    if any(not t.trivia for t in toks[start:close_i]) or ranges:
        ranges.append((start, close_i))
    return ranges


def strip_end(sql: str) -> list[Token]:
    toks = list(tokenize(sql))
    while toks and (toks[-1].trivia or (toks[-1].kind == "op" and toks[-1].text == ";")):
        toks.pop()
    while toks and toks[0].trivia:
        toks.pop(0)
    return toks


def arrow_calls(toks: list[Token]) -> list[Token]:
    """`a ->> b` becomes a call the emitter delegates to sqlite3 (DuckDB's ->> always answers text)."""
    while True:
        at = next((i for i, t in enumerate(toks) if t.kind == "op" and t.text == "->>"), None)
        if at is None:
            return toks
        lo = _operand_start(toks, at)
        hi = next_significant(toks, at + 1)
        if hi is None:
            raise D1Unsupported("->> without a right operand")
        call = [Token("word", "->>"), Token("op", "("), *toks[lo:at], Token("op", ","), toks[hi], Token("op", ")")]
        toks = toks[:lo] + call + toks[hi + 1 :]


def _operand_start(toks: list[Token], at: int) -> int:
    i = at - 1
    while i >= 0 and toks[i].trivia:
        i -= 1
    if toks[i].text == ")":
        depth = 0
        while i >= 0:
            depth += toks[i].text == ")" and toks[i].kind == "op"
            depth -= toks[i].text == "(" and toks[i].kind == "op"
            if depth == 0:
                break
            i -= 1
        return i - 1 if i > 0 and toks[i - 1].kind == "word" else i
    while i >= 2 and toks[i - 1].text == "." and toks[i - 2].kind in ("word", "qident"):
        i -= 2
    return i


def new_emitter(sql: str, signature: tuple[str, ...] = ()) -> Emitter:
    marks = placeholders(sql)
    return Emitter(marks.numbers, marks.count, signature=signature)
