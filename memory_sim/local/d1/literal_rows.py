"""A multi-row INSERT of literals, as a hand-written SQL file holds them (`VALUES (1, 'a'), (2, 'b'), ...` with
more values than D1 lets a statement bind), read into rows of values for the bulk path (bulk.py).

`literal_insert(sql)` gives the same INSERT with one row of `?` (which the bulk path takes) and the rows' values
as SQLite gives the literals: text and blobs as written, plain integers read here, every other number (REALs,
integers past 18 digits) read by SQLite itself, so that a REAL is the same to the last bit. Anything else in a
row (an expression, a function, a subquery) and it is None: the statement runs as it is.
"""

from __future__ import annotations

import bisect
import re
import sqlite3
import threading
from typing import Any

from memory_sim.bindings.d1_sql import Token
from memory_sim.local.d1.dialect.expressions import match_paren, split_args, strip_end

_NUMBERS_PER_QUERY = 500
_INT64 = 2**63 - 1
_parser = threading.local()


_NAME = r'(?:"(?:[^"]|"")+"|`(?:[^`]|``)+`|\[[^\]]+\]|[A-Za-z_][A-Za-z0-9_$]*)'
_HEAD = re.compile(rf"\s*INSERT\s+INTO\s+{_NAME}\s*(?:\([^()';]*\))?\s*VALUES\b", re.I)
# One literal of a row (each kind in its own group, quotes kept), then a comma, the end of the row and the start
# of the next, or the end of the last row. Possessive: a text that is not rows of literals fails in linear time.
_ITEM = (r"""\s*+(?:('(?:[^']|'')*+')|([-+]?(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][-+]?\d++)?)|(NULL)"""
         r"""|([xX]'[0-9A-Fa-f]*+'))\s*+(,|\)\s*+,\s*+\(|\)\s*+\Z)""")
# (Without capturing groups: Python 3.11's re fails on a possessive repeat of a group that captures.)
_ROWS = re.compile(r"\s*+\((?:" + re.sub(r"(?<!\\)\((?!\?)", "(?:", _ITEM) + ")++", re.I)
_ITEMS = re.compile(_ITEM, re.I)


def literal_insert(sql: str) -> tuple[str, list[tuple[Any, ...]]] | None:
    """(the INSERT with one row of `?`, the rows' values), or None when a row holds anything but literals."""
    head = _HEAD.match(sql)
    if head is not None and _ROWS.fullmatch(sql, head.end()):
        return _scanned(head.group(), sql[head.end():])
    return _tokenised(sql)  # comments, hex numbers, signs apart from their number...


def _scanned(head: str, body: str) -> tuple[str, list[tuple[Any, ...]]] | None:
    """Rows of literals read by one regular expression (no tokenising: a statement of 500 rows is 2,500 values)."""
    rows: list[tuple[Any, ...]] = []
    numbers: list[tuple[int, int, str]] = []
    row: list[Any] = []
    for quoted, number, null, blob, separator in _ITEMS.findall(body):
        if quoted:
            row.append(quoted[1:-1].replace("''", "'"))
        elif number:
            digits = number.lstrip("+-")
            if digits.isdigit() and len(digits) <= 18:
                row.append(int(number))
            else:
                numbers.append((len(rows), len(row), number))
                row.append(None)
        elif null:
            row.append(None)
        else:
            if len(blob) % 2 == 0:  # X'...' with an odd count of hex digits
                return None
            row.append(bytes.fromhex(blob[2:-1]))
        if separator != ",":
            if rows and len(row) != len(rows[0]):
                return None
            rows.append(tuple(row))
            row = []
    if not rows or not _read_numbers(rows, numbers):
        return None
    return f"{head} ({', '.join('?' * len(rows[0]))})", rows


def _tokenised(sql: str) -> tuple[str, list[tuple[Any, ...]]] | None:
    toks = strip_end(sql)
    sig = [i for i, t in enumerate(toks) if not t.trivia]
    values_at = next((i for i in sig if toks[i].is_word("VALUES")), None)
    if len(sig) < 5 or not toks[sig[0]].is_word("INSERT") or values_at is None:
        return None
    rows: list[tuple[Any, ...]] = []
    numbers: list[tuple[int, int, str]] = []  # (row, column, text) read by SQLite
    after = [i for i in sig if i > values_at]
    at = 0
    while True:  # `at`: the position in `after` of the row's "("
        if at >= len(after) or toks[after[at]].text != "(":
            return None
        close = match_paren(toks, after[at])
        row: list[Any] = []
        for lo, hi in split_args(toks, after[at], close):
            item = [t for t in toks[lo:hi] if not t.trivia]
            value = _literal(item, len(rows), len(row), numbers)
            if value is _NOT_LITERAL:
                return None
            row.append(value)
        if rows and len(row) != len(rows[0]):
            return None
        rows.append(tuple(row))
        following = bisect.bisect_right(after, close)  # the first significant token after the row
        if following == len(after):
            break
        if toks[after[following]].text != "," or following + 1 == len(after):
            return None  # ON CONFLICT, RETURNING: the statement runs as it is
        at = following + 1
    if not _read_numbers(rows, numbers):
        return None
    head = "".join(t.text for t in toks[: values_at + 1])
    return f"{head} ({', '.join('?' * len(rows[0]))})", rows


_NOT_LITERAL = object()


def _literal(item: list[Token], row: int, column: int, numbers: list[tuple[int, int, str]]) -> Any:
    if len(item) == 1 and item[0].is_word("NULL"):
        return None
    if len(item) == 1 and item[0].kind == "string":
        return item[0].text[1:-1].replace("''", "'")
    if len(item) == 1 and item[0].kind == "blob":
        digits = item[0].text[2:-1]
        return bytes.fromhex(digits) if len(digits) % 2 == 0 else _NOT_LITERAL
    sign = ""
    if len(item) == 2 and item[0].kind == "op" and item[0].text in "+-":
        sign, item = item[0].text, item[1:]
    if len(item) != 1 or item[0].kind != "number":
        return _NOT_LITERAL
    text = item[0].text
    if text.isdigit() and len(text) <= 18:
        return int(sign + text)
    if text.lower().startswith("0x"):
        return _NOT_LITERAL  # SQLite's hex integers: the statement runs as it is
    numbers.append((row, column, sign + text))
    return None  # filled in by _read_numbers


def _read_numbers(rows: list[tuple[Any, ...]], numbers: list[tuple[int, int, str]]) -> bool:
    """Fills in the numbers SQLite reads; False where one would not keep its type when bound (an integer literal
    past 64 bits, which SQLite makes REAL)."""
    if not hasattr(_parser, "conn"):
        _parser.conn = sqlite3.connect(":memory:")
    for start in range(0, len(numbers), _NUMBERS_PER_QUERY):
        part = numbers[start : start + _NUMBERS_PER_QUERY]
        read = _parser.conn.execute("SELECT " + ", ".join(text for _, _, text in part)).fetchone()
        for (row, column, text), value in zip(part, read, strict=True):
            if (isinstance(value, float) and text.lstrip("+-").isdigit()) or (
                    isinstance(value, int) and abs(value) > _INT64):
                return False
            values = list(rows[row])
            values[column] = value
            rows[row] = tuple(values)
    return True
