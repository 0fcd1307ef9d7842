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
from typing import Any

from memory_sim.bindings.d1_sql import INSERT_VALUES_HEAD, LiteralRows, Token, literal_rows, sqlite_numbers
from memory_sim.local.d1.dialect.expressions import match_paren, split_args, strip_end

_HEAD = re.compile(rf"\s*{INSERT_VALUES_HEAD}\b", re.I)


def literal_insert(sql: str) -> tuple[str, list[tuple[Any, ...]]] | None:
    """(the INSERT with one row of `?`, the rows' values), or None when a row holds anything but literals."""
    head = _HEAD.match(sql)
    if head is not None:
        found = literal_rows(sql[head.end():])  # one regular expression, no tokenising (500 rows: 2,500 values)
        if found is not None:
            return _scanned(head.group(), found)
    return _tokenised(sql)  # comments, hex numbers, signs apart from their number...


def _scanned(head: str, found: LiteralRows) -> tuple[str, list[tuple[Any, ...]]] | None:
    values, width = found.values, found.width
    if found.numbers:
        read = sqlite_numbers([text for _, text in found.numbers])
        if None in read:
            return None
        for (at, _), value in zip(found.numbers, read, strict=True):
            values[at] = value
    rows = [tuple(values[at:at + width]) for at in range(0, len(values), width)]
    return f"{head} ({', '.join('?' * width)})", rows


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
    read = sqlite_numbers([text for _, _, text in numbers])
    if None in read:
        return False
    for (row, column, _), value in zip(numbers, read, strict=True):
        values = list(rows[row])
        values[column] = value
        rows[row] = tuple(values)
    return True
