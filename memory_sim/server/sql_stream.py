"""The statements of a SQL file, read a piece at a time: what a D1 import runs, without the whole file (or a list
of its statements) in memory.

A scanner that knows SQLite's quoting ('text', "name", `name`, [name]) and comments (-- and /* */) finds the
semicolons that end statements, in time linear in the file; inside CREATE TRIGGER ... BEGIN ... END, where a
semicolon may end an inner statement, SQLite's own `sqlite3.complete_statement` decides. A statement longer than
D1's limit is refused as soon as it is seen to be, not once it is all read; blanks and comments between
statements belong to neither (a long comment is no statement's bytes). A NUL ends a statement's text, as SQLite
reads it.

`with_parameters` (`bound_statements` over a stream) turns an `INSERT INTO t [(cols)] VALUES (literals)[, ...]`
(what `wrangler d1 export` writes, and what hand-written files hold) into the same INSERT with `?` for each literal
and the values bound, so that consecutive rows share one SQL text and the engine runs them together (the DuckDB
engine as one statement). The values are those SQLite itself gives the literals (plain integers read in Python,
other numbers by SQLite, so a REAL is the same to the last bit); anything else (other
statements, expressions, integers outside 64 bits, more than D1's 100 parameters) is left as it is.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Generator, Iterable, Iterator

from memory_sim.bindings import limits
from memory_sim.bindings.d1 import D1Value
from memory_sim.bindings.d1_sql import INSERT_VALUES_HEAD, literal_rows, sqlite_numbers
from memory_sim.errors import D1Error

_NORMAL = re.compile(r"""['"`\[;]|--|/\*""")
# A whole statement with no comment and no quoting but '...', ending in its semicolon (`-` and `/` only where they
# start no comment): what most lines of a dump are, scanned by one match.
# Possessive (no backtracking): a statement cut by the end of the text fails in linear time, not exponential.
_PLAIN = re.compile(r"""(?:[^'";`\[\-/]++|'(?:[^']|'')*+'|-(?!-)|/(?!\*))*+;""")
_TRIGGER = re.compile(r"\s*CREATE\s+(?:TEMP\s+|TEMPORARY\s+)?TRIGGER\b", re.IGNORECASE)


class _Scanner:
    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.pieces: list[str] = []
        self.size = 0
        self.significant = False  # anything but blanks and comments in the pending statement
        self.closing: str | None = None  # the quote, "\n" (line comment) or "*/" being waited for
        self.count = 0
        self.carry = ""  # the last character of a piece, when only the next piece tells what it starts

    def feed(self, text: str, final: bool = False) -> Iterator[str]:
        text, self.carry = self.carry + text, ""
        i = 0
        while i < len(text) and not self.carry:
            if self.closing is None and not self.pieces:  # between statements: whole plain ones at once
                i = yield from self._plain(text, i)
                if i >= len(text):
                    break
            if self.closing is None:
                i = yield from self._normal(text, i, final)
            else:
                i = self._inside(text, i, final)

    def _plain(self, text: str, i: int) -> Generator[str, None, int]:
        """Statements from `i` that hold no comment and no quote but '...' (a dump's INSERTs), each ending in this
        text: one regular expression match each. Returns where the first other one starts."""
        while True:
            found = _PLAIN.match(text, i)
            if found is None or found.end() - i > self.max_chars or _TRIGGER.match(text, i):
                return i
            statement = found.group()
            i = found.end()
            if statement[:-1].strip():
                self.count += 1
                yield _as_sqlite_reads(statement[:-1])  # without blanks before it, cut at a NUL

    def _normal(self, text: str, i: int, final: bool) -> Generator[str, None, int]:
        found = _NORMAL.search(text, i)
        end = found.start() if found else len(text)
        if found is None and not final and text[-1] in "-/":  # perhaps the first half of -- or /*
            end -= 1
            self.carry = text[-1]
        if text[i:end].strip():
            self.significant = True
        if found is None:
            self._keep(text[i:end])
            return len(text)
        mark = found.group()
        if mark not in (";", "--", "/*"):
            self.significant = True  # a quoted name or text starts (or goes on with) a statement
        self._keep(text[i : found.end()])
        if mark == ";":
            yield from self._maybe_end()
        elif mark == "--":
            self.closing = "\n"
        elif mark == "/*":
            self.closing = "*/"
        else:
            self.closing = "]" if mark == "[" else mark
        return found.end()

    def _inside(self, text: str, i: int, final: bool) -> int:
        closing = self.closing or ""
        at = text.find(closing, i)
        if at < 0:
            end = len(text)
            if closing == "*/" and not final and text[-1] == "*":
                end -= 1
                self.carry = "*"
            self._keep(text[i:end])
            return len(text)
        end = at + len(closing)
        if closing in ("'", '"', "`"):
            if end == len(text) and not final:  # a doubled quote, or the end of the text: the next piece says
                self._keep(text[i:at])
                self.carry = closing
                return len(text)
            if end < len(text) and text[end] == closing:  # a doubled quote: still inside
                self._keep(text[i : end + 1])
                return end + 1
        self._keep(text[i:end])
        self.closing = None
        return end

    def _maybe_end(self) -> Iterator[str]:
        statement = "".join(self.pieces)
        if _TRIGGER.match(statement) and not sqlite3.complete_statement(statement):
            self.pieces = [statement]
            return  # a semicolon inside the trigger's body
        self.pieces, self.size = [], 0
        if self.significant:
            self.count += 1
            yield _as_sqlite_reads(statement[:-1])  # without its semicolon, as split_statements gives it
        self.significant = False

    def _keep(self, piece: str) -> None:
        if not self.significant:
            return  # blanks and comments before a statement are not part of it (nor of its 100 KB)
        self.pieces.append(piece)
        self.size += len(piece)
        if self.size > self.max_chars:
            raise D1Error(f"statement {self.count + 1} is longer than {limits.D1_MAX_STATEMENT_BYTES:,} bytes: "
                          "SQLITE_TOOBIG")

    def finish(self) -> Iterator[str]:
        yield from self.feed("", final=True)
        statement = "".join(self.pieces)
        self.pieces, self.size = [], 0
        if self.significant and statement.strip():
            self.count += 1
            yield _as_sqlite_reads(statement)


def _as_sqlite_reads(statement: str) -> str:
    """SQLite reads SQL text up to its first NUL (sqlite3_prepare stops there), inside a string literal too: the
    statement is cut there, and fails as it does on D1 (an unterminated literal is an unrecognized token)."""
    statement = statement.lstrip()  # blanks before it are no part of it either
    nul = statement.find("\0")
    return statement if nul < 0 else statement[:nul]


def statements(pieces: Iterable[str], max_chars: int = limits.D1_MAX_STATEMENT_BYTES) -> Iterator[str]:
    """Each statement of the text given in `pieces` (any split), as soon as its end is read."""
    scanner = _Scanner(max_chars)
    for piece in pieces:
        yield from scanner.feed(piece)
    yield from scanner.finish()


def file_statements(path: str, chunk_chars: int = 1 << 20) -> Iterator[str]:
    """The statements of a UTF-8 SQL file, read `chunk_chars` at a time (UnicodeDecodeError where it is not)."""
    with open(path, encoding="utf-8", newline="") as source:
        yield from statements(iter(lambda: source.read(chunk_chars), ""))


_INSERT = re.compile(rf"\s*({INSERT_VALUES_HEAD}\s*)(\(.*)", re.I | re.S)
_CHUNK_NUMBERS = 500  # numbers SQLite reads in one query, over the statements of a chunk


def with_parameters(statement: str) -> tuple[str, tuple[D1Value, ...]]:
    """`(sql, params)`: the INSERT with its literals bound (each row of a multi-row VALUES as `(?, ...)`), or the
    statement as it is with no parameters."""
    return next(bound_statements([statement]))


def bound_statements(statements: Iterable[str], chunk: int = 256) -> Iterator[tuple[str, tuple[D1Value, ...]]]:
    """`with_parameters` of each statement, in order; the numbers that only SQLite reads exactly (REALs, long
    integers) are read for `chunk` statements at a time, in one query."""
    pending: list[tuple[str, _Literals | None]] = []
    for statement in statements:
        pending.append((statement, _literals(statement)))
        if len(pending) >= chunk:
            yield from _finished(pending)
            pending = []
    yield from _finished(pending)


_Literals = tuple[str, list[D1Value], list[tuple[int, str]]]  # the SQL with ?s, the values, numbers left to read


def _literals(statement: str) -> _Literals | None:
    found = _INSERT.fullmatch(statement)
    if found is None:
        return None
    rows = literal_rows(found.group(2))
    if rows is None or len(rows.values) > limits.D1_MAX_BOUND_PARAMETERS:
        return None
    row = f"({', '.join('?' * rows.width)})"
    return f"{found.group(1)}{', '.join([row] * (len(rows.values) // rows.width))}", rows.values, rows.numbers


def _finished(pending: list[tuple[str, _Literals | None]]) -> Iterator[tuple[str, tuple[D1Value, ...]]]:
    numbers = [(k, position, text) for k, (_, bound) in enumerate(pending) if bound for position, text in bound[2]]
    refused: set[int] = set()
    for at in range(0, len(numbers), _CHUNK_NUMBERS):
        part = numbers[at:at + _CHUNK_NUMBERS]
        for (k, position, _), value in zip(part, sqlite_numbers([text for _, _, text in part]), strict=True):
            bound = pending[k][1]
            assert bound is not None
            if value is None:
                refused.add(k)
            else:
                bound[1][position] = value
    for k, (statement, bound) in enumerate(pending):
        yield (statement, ()) if bound is None or k in refused else (bound[0], tuple(bound[1]))
