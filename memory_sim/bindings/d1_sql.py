"""The D1 binding's SQL lexicon: D1 speaks SQLite, and this small SQLite tokenizer finds placeholders, keywords,
parentheses and statement boundaries without being fooled by strings, quoted names or comments. Joining the
tokens' text gives the input back. The local engines, `memory-sim d1 execute` and the server split and count
with it; the DuckDB engine's SQLite dialect (local/d1/dialect/) builds on its tokens. `sql_literal` writes a
value back as SQLite literal text (exports, dumps); `literal_rows` and `sqlite_numbers` read such literals back,
for the import's fast path (the server's and the DuckDB engine's). A leaf: it imports only the limits and the
error tree (and sqlite3, which reads numbers as SQLite does).
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memory_sim.bindings import limits
from memory_sim.errors import D1Error

# Order matters: longer and more specific patterns first.
_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>--[^\n]*|/\*.*?(?:\*/|$))
  | (?P<blob>[xX]'(?:[^']|'')*')
  | (?P<string>'(?:[^']|'')*')
  | (?P<qident>"(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\]]*\])
  | (?P<number>0[xX][0-9a-fA-F]+|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<param>\?\d*|[:@$][A-Za-z_][A-Za-z0-9_]*)
  | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<op>->>|->|\|\||<=|>=|==|!=|<>|<<|>>|[-+*/%<>=~&|(),.;])
    """,
    re.VERBOSE | re.DOTALL | re.ASCII,
)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # ws, comment, blob, string, qident, number, param, word, op, other
    text: str

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == "word" else self.text

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.text.upper() in words

    @property
    def trivia(self) -> bool:
        return self.kind in ("ws", "comment")

    @property
    def name(self) -> str:
        """The identifier this token names (quotes removed)."""
        if self.kind == "qident":
            body = self.text[1:-1]
            return body if self.text[0] == "[" else body.replace(self.text[0] * 2, self.text[0])
        return self.text


# Texts up to this long are tokenised once and kept (lru); longer ones (a hand-written file's INSERT of hundreds
# of rows) each time: 2,048 kept token lists of 30 kB statements would hold over a gigabyte.
_KEPT_TEXT_CHARS = 8192
_PARAM_MARKS = re.compile(r"[?:@$]")


def tokenize(sql: str) -> tuple[Token, ...]:
    return _tokenize_kept(sql) if len(sql) <= _KEPT_TEXT_CHARS else _tokenize(sql)


@lru_cache(maxsize=2048)
def _tokenize_kept(sql: str) -> tuple[Token, ...]:
    return _tokenize(sql)


def _tokenize(sql: str) -> tuple[Token, ...]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(sql):
        match = _TOKEN.match(sql, pos)
        if match is None:
            tokens.append(Token("other", sql[pos]))
            pos += 1
            continue
        kind = match.lastgroup or "other"
        tokens.append(Token(kind, match.group()))
        pos = match.end()
    return tuple(tokens)


def significant(tokens: tuple[Token, ...] | list[Token]) -> list[Token]:
    return [t for t in tokens if not t.trivia]


@dataclass(frozen=True, slots=True)
class Placeholders:
    """How a statement's `?`/`?NNN` placeholders map to bound values (SQLite's numbering)."""

    numbers: tuple[int, ...]  # the 1-based value index of each placeholder, in text order
    count: int  # how many values the statement needs


def placeholders(sql: str) -> Placeholders:
    if len(sql) <= _KEPT_TEXT_CHARS:
        return _placeholders_kept(sql)
    if not _PARAM_MARKS.search(sql):  # no character a parameter starts with: none, without tokenising
        return Placeholders((), 0)
    return _placeholders(sql)


@lru_cache(maxsize=2048)
def _placeholders_kept(sql: str) -> Placeholders:
    return _placeholders(sql)


def _placeholders(sql: str) -> Placeholders:
    numbers: list[int] = []
    highest = 0
    for token in tokenize(sql):
        if token.kind != "param":
            continue
        if token.text[0] != "?":
            raise D1Error(f"named parameters are not supported ({token.text}); use ? or ?NNN")
        number = int(token.text[1:]) if len(token.text) > 1 else highest + 1
        if number < 1 or number > limits.D1_MAX_BOUND_PARAMETERS:
            raise D1Error(f"too many SQL variables (?{number}; at most {limits.D1_MAX_BOUND_PARAMETERS}): SQLITE_RANGE")
        highest = max(highest, number)
        numbers.append(number)
    return Placeholders(tuple(numbers), highest)


def split_statements(sql: str) -> list[str]:
    """Split on top-level semicolons; empty pieces dropped."""
    pieces: list[str] = []
    current: list[str] = []
    for token in tokenize(sql):
        if token.kind == "op" and token.text == ";":
            pieces.append("".join(current))
            current = []
        else:
            current.append(token.text)
    pieces.append("".join(current))
    return [p for p in pieces if significant(tokenize(p))]


def first_keyword(sql: str) -> str:
    return _first_keyword_kept(sql) if len(sql) <= _KEPT_TEXT_CHARS else _first_keyword(sql)


@lru_cache(maxsize=4096)
def _first_keyword_kept(sql: str) -> str:
    return _first_keyword(sql)


def _first_keyword(sql: str) -> str:
    """The first significant token, read from the start only."""
    pos = 0
    while pos < len(sql):
        match = _TOKEN.match(sql, pos)
        if match is None:
            return sql[pos]
        if match.lastgroup not in ("ws", "comment"):
            return Token(match.lastgroup or "other", match.group()).upper
        pos = match.end()
    return ""


def dummy_values(sql: str) -> tuple[None, ...]:
    """NULLs for every placeholder: enough to compile a statement without running it."""
    return (None,) * placeholders(sql).count


def sql_literal(value: Any) -> str:
    """A value as SQLite literal text: blobs (D1 returns them as lists of byte values) as X'..', infinities as
    numbers that overflow to them, NaN as NULL (SQLite stores NaN as NULL)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "9e999" if value > 0 else "-9e999"
        return "NULL" if math.isnan(value) else repr(value)
    if isinstance(value, (list, bytes, bytearray)):
        return "X'" + bytes(value).hex().upper() + "'"
    return "'" + str(value).replace("'", "''") + "'"


# --- rows of literals: what an INSERT of a dump or a hand-written file holds ------------------------------------
_NAME = r'(?:"(?:[^"]|"")+"|`(?:[^`]|``)+`|\[[^\]]+\]|[A-Za-z_][A-Za-z0-9_$]*)'
# `INSERT INTO name [(columns)] VALUES`, from INSERT on (the caller allows the blanks before it).
INSERT_VALUES_HEAD = rf"INSERT\s+INTO\s+{_NAME}\s*(?:\([^()';]*\))?\s*VALUES"
# One literal of a row (each kind in its own group, quotes kept), then a comma, the end of the row and the start
# of the next, or the end of the last row. Possessive: a text that is not rows of literals fails in linear time.
_ITEM = (r"""\s*+(?:('(?:[^']|'')*+')|([-+]?(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][-+]?\d++)?)|(NULL)"""
         r"""|([xX]'[0-9A-Fa-f]*+'))\s*+(,|\)\s*+,\s*+\(|\)\s*+\Z)""")
# (Without capturing groups: Python 3.11's re fails on a possessive repeat of a group that captures.)
_ROWS = re.compile(r"\s*+\((?:" + re.sub(r"(?<!\\)\((?!\?)", "(?:", _ITEM) + ")++", re.I)
_ITEMS = re.compile(_ITEM, re.I)
_INT64 = 2**63 - 1


@dataclass(frozen=True, slots=True)
class LiteralRows:
    """The values of `(a, b), (c, d), ...`, row after row. Plain integers are read here; every other number
    (REALs, integers past 18 digits) is left None at its place in `numbers` for SQLite to read (`sqlite_numbers`),
    so that a REAL is the same to the last bit."""

    values: list[Any]
    width: int  # values per row
    numbers: list[tuple[int, str]]  # (index in values, the literal's text)


def literal_rows(rows: str) -> LiteralRows | None:
    """`rows`: what follows VALUES, `(1, 'a', NULL, X'00'), (2.5, ...)`, with nothing after the last row. None
    unless every item is a literal (text, a number with its sign, NULL, a blob of whole bytes) and every row
    holds as many."""
    if _ROWS.fullmatch(rows) is None:
        return None
    values: list[Any] = []
    numbers: list[tuple[int, str]] = []
    width = start = 0
    for quoted, number, null, blob, separator in _ITEMS.findall(rows):
        if quoted:
            values.append(quoted[1:-1].replace("''", "'"))
        elif number:
            digits = number[1:] if number[0] in "+-" else number
            if digits.isdigit() and len(digits) <= 18:  # read exactly as SQLite reads it
                values.append(int(number))
            else:
                numbers.append((len(values), number))
                values.append(None)
        elif null:
            values.append(None)
        else:
            if len(blob) % 2 == 0:  # X'...' with an odd count of hex digits
                return None
            values.append(bytes.fromhex(blob[2:-1]))
        if separator != ",":  # the end of a row
            if width == 0:
                width = len(values)
            elif len(values) - start != width:
                return None
            start = len(values)
    return LiteralRows(values, width, numbers) if values else None


_NUMBERS_PER_QUERY = 500  # numbers SQLite reads in one SELECT (it takes up to 2,000 result columns)
_number_reader = threading.local()


def sqlite_numbers(texts: list[str]) -> list[int | float | None]:
    """Number literals as SQLite reads them (a REAL the same to the last bit); None where one would not keep its
    type when bound: an integer literal past 64 bits, which SQLite makes REAL (and -2**63 is one of them)."""
    if not hasattr(_number_reader, "conn"):
        _number_reader.conn = sqlite3.connect(":memory:")
    read: list[int | float | None] = []
    for at in range(0, len(texts), _NUMBERS_PER_QUERY):
        part = texts[at:at + _NUMBERS_PER_QUERY]
        for text, value in zip(part, _number_reader.conn.execute("SELECT " + ", ".join(part)).fetchone(),
                               strict=True):
            past_64_bits = isinstance(value, float) and text.lstrip("+-").isdigit()
            read.append(None if past_64_bits or (isinstance(value, int) and abs(value) > _INT64) else value)
    return read
