"""The statements of a SQL file, read a piece at a time: what a D1 import runs, without the whole file (or a list
of its statements) in memory.

A scanner that knows SQLite's quoting ('text', "name", `name`, [name]) and comments (-- and /* */) finds the
semicolons that end statements, in time linear in the file; inside CREATE TRIGGER ... BEGIN ... END, where a
semicolon may end an inner statement, SQLite's own `sqlite3.complete_statement` decides. A statement longer than
D1's limit is refused as soon as it is seen to be, not once it is all read.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Generator, Iterable, Iterator

from memory_sim.bindings import limits
from memory_sim.errors import D1Error

_NORMAL = re.compile(r"""['"`\[;]|--|/\*""")
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
            if self.closing is None:
                i = yield from self._normal(text, i, final)
            else:
                i = self._inside(text, i, final)

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
        self._keep(text[i : found.end()])
        if mark == ";":
            yield from self._maybe_end()
        elif mark == "--":
            self.closing = "\n"
        elif mark == "/*":
            self.closing = "*/"
        else:
            self.significant = True
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
            yield statement[:-1]  # without its semicolon, as split_statements gives it
        self.significant = False

    def _keep(self, piece: str) -> None:
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
            yield statement


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
