"""SQLite's value rules, in Python: type affinity of a declared type, the conversions text undergoes (affinity on
storage and comparison, arithmetic, CAST), REAL as text, and comparison of two values by storage class. The DuckDB
engine uses them for literals and bound parameters at translation time, and to answer comparisons it cannot type
statically. Each rule is checked against sqlite3 itself (tests/d1/test_sqlite_values.py).

Values are Python's: None, int (64-bit), float, str, bytes.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_WS = r"[ \t\n\v\f\r]*"
_NUMBER = re.compile(rf"{_WS}([+-]?)(?:(\d+)(\.\d*)?|(\.\d+))([eE][+-]?\d+)?{_WS}", re.ASCII)
_INTEGER = re.compile(rf"{_WS}([+-]?)(\d+){_WS}", re.ASCII)
_PREFIX = re.compile(rf"{_WS}([+-]?)(?:(\d+)(\.\d*)?|(\.\d+))?", re.ASCII)
_EXPONENT = re.compile(r"[eE][+-]?\d+", re.ASCII)
_SAME_AS_INT = 2**51  # sqlite3RealSameAsInt: CAST ... AS NUMERIC makes a REAL an INTEGER only inside +-2^51


def affinity(declared: str) -> str:
    """The type affinity of a column declared with this type name (SQLite's five rules, in their order)."""
    upper = declared.upper()
    if "INT" in upper:
        return "INTEGER"
    if "CHAR" in upper or "CLOB" in upper or "TEXT" in upper:
        return "TEXT"
    if "BLOB" in upper or not upper.strip():
        return "BLOB"
    if "REAL" in upper or "FLOA" in upper or "DOUB" in upper:
        return "REAL"
    return "NUMERIC"


def storage_class(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, (bool, int)):
        return "integer"
    if isinstance(value, float):
        return "real"
    if isinstance(value, str):
        return "text"
    return "blob"


def numeric_affinity(text: str) -> int | float | None:
    """What NUMERIC (and INTEGER) affinity makes of a text: an INTEGER or REAL when the whole text is a
    well-formed number (spaces around allowed, no hex), else None (the text stays text)."""
    if "\x00" in text:
        return None
    whole = _INTEGER.fullmatch(text)
    if whole is not None:
        value = int(whole.group(1) + whole.group(2))
        return value if INT64_MIN <= value <= INT64_MAX else float(value)
    if _NUMBER.fullmatch(text) is None:
        return None
    real = float(text.strip(" \t\n\v\f\r"))
    return _integral(real) if _is_integral(real) else real


def _is_integral(real: float) -> bool:
    """sqlite3VdbeIntegerAffinity: a REAL that is exactly an integer strictly inside the 64-bit range."""
    return math.isfinite(real) and real == int(real) and INT64_MIN < int(real) < INT64_MAX


def _integral(real: float) -> int:
    return int(real)


def arithmetic_value(text: str) -> int | float:
    """The number a text stands for in arithmetic (`'12abc' + 1` is 13): its longest numeric prefix, INTEGER when
    that prefix is a plain integer that fits in 64 bits, else REAL; 0 without digits."""
    match = _PREFIX.match(text)
    assert match is not None
    sign, digits, fraction, point = match.group(1), match.group(2), match.group(3), match.group(4)
    if digits is None and point is None:
        return 0
    rest = text[match.end():]
    exponent = _EXPONENT.match(rest)
    if digits is not None and fraction is None and exponent is None:
        value = int(sign + digits)
        if INT64_MIN <= value <= INT64_MAX:
            return value
    mantissa = sign + (digits or "") + (fraction or point or "")
    return float(mantissa + (exponent.group() if exponent else ""))


def cast_integer(value: Any) -> int | None:
    """CAST(value AS INTEGER)."""
    if value is None:
        return None
    if isinstance(value, (bool, int)):
        return int(value)
    if isinstance(value, float):
        return _clamp_real(value)
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    match = _PREFIX.match(text)
    assert match is not None
    if match.group(2) is None:
        return 0
    number = int(match.group(1) + match.group(2))
    return max(INT64_MIN, min(INT64_MAX, number))


def _clamp_real(real: float) -> int:
    if math.isnan(real):
        return 0
    if real >= 2.0**63:
        return INT64_MAX
    if real < -(2.0**63):
        return INT64_MIN
    return int(real)


def cast_real(value: Any) -> float | None:
    """CAST(value AS REAL)."""
    if value is None:
        return None
    if isinstance(value, (bool, int, float)):
        return float(value)
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    match = _PREFIX.match(text)
    assert match is not None  # every part of the prefix is optional
    sign = match.group(1)
    if match.group(2) is None and match.group(4) is None:
        return -0.0 if sign == "-" else 0.0
    exponent = _EXPONENT.match(text[match.end():])
    mantissa = sign + (match.group(2) or "") + (match.group(3) or match.group(4) or "")
    return float(mantissa + (exponent.group() if exponent else ""))


def cast_numeric(value: Any) -> int | float | None:
    """CAST(value AS NUMERIC): numbers unchanged; a text becomes an INTEGER where it is a plain integer, or where
    the REAL it reads as is an integer within +-2^51; else a REAL."""
    if value is None:
        return None
    if isinstance(value, (bool, int)):
        return int(value)
    if isinstance(value, float):
        return value  # a REAL stays a REAL: only text is numerified
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    number = arithmetic_value(text)
    if isinstance(number, int):
        return number
    return _same_as_int(cast_real(text) or 0.0)


def _same_as_int(real: float) -> int | float:
    if math.isfinite(real) and real == int(real) and -_SAME_AS_INT <= int(real) < _SAME_AS_INT:
        return int(real)
    return real


def real_text(real: float) -> str:
    """A REAL as SQLite writes it as text ("%!.15g" with SQLite's own digit generation, which rounds some ties
    differently from C's printf): asked of sqlite3 itself."""
    return str(_oracle().execute("SELECT CAST(? AS TEXT)", (real,)).fetchone()[0])


_LOCAL = threading.local()


def _oracle() -> sqlite3.Connection:
    """A private in-memory sqlite3 per thread, for conversions whose digits only SQLite's code gives."""
    conn = getattr(_LOCAL, "conn", None)
    if conn is None:
        conn = _LOCAL.conn = sqlite3.connect(":memory:", check_same_thread=False)
    return conn


def as_text(value: Any) -> str | None:
    """CAST(value AS TEXT)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float):
        return real_text(value)
    if isinstance(value, (bool, int)):
        return str(int(value))
    return bytes(value).decode("utf-8", "replace")


def apply_affinity(value: Any, aff: str) -> Any:
    """The value after an affinity is applied to it (for storage or a comparison); "" is no affinity."""
    if aff in ("INTEGER", "NUMERIC", "REAL") and isinstance(value, str):
        number = numeric_affinity(value)
        if number is None:
            return value
        return float(number) if aff == "REAL" else number
    if aff == "REAL" and isinstance(value, int) and not isinstance(value, bool):
        return value  # a REAL column stores 5 as 5.0, but 5 and 5.0 compare equal: nothing to do for comparisons
    if aff == "TEXT" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return as_text(value)
    return value


def comparison_affinity(left: str, right: str) -> tuple[str, str]:
    """The affinities applied to each operand of a comparison, given each operand's own affinity ("" for an
    expression with none): sqlite3CompareAffinity, applied to both sides."""
    numeric = ("INTEGER", "REAL", "NUMERIC")
    if left and right:
        chosen = "NUMERIC" if left in numeric or right in numeric else ""
        return chosen, chosen
    chosen = left or right
    return chosen, chosen


_CLASS_ORDER = {"null": 0, "integer": 1, "real": 1, "text": 2, "blob": 3}


def compare(a: Any, b: Any, collation: str = "BINARY") -> int | None:
    """SQLite's order of two values (after affinity): None when either is NULL, else -1, 0 or 1. NULL < numbers
    < text < blobs; numbers compare exactly (an INTEGER against a REAL too); text by collation; blobs bytewise."""
    if a is None or b is None:
        return None
    ca, cb = _CLASS_ORDER[storage_class(a)], _CLASS_ORDER[storage_class(b)]
    if ca != cb:
        return -1 if ca < cb else 1
    if ca == 1:
        return _compare_numbers(a, b)
    if ca == 2:
        a, b = _collate(a, collation), _collate(b, collation)
        a, b = a.encode(), b.encode()
    a, b = bytes(a), bytes(b)
    return (a > b) - (a < b)


def _compare_numbers(a: int | float, b: int | float) -> int:
    if isinstance(a, float) and isinstance(b, float):
        return (a > b) - (a < b)
    if isinstance(a, float) or isinstance(b, float):
        real = a if isinstance(a, float) else b
        if math.isinf(real) or math.isnan(real):
            sign = 1 if real > 0 else -1
            return sign if real is a else -sign
        # exact: an integer-valued REAL is an exact integer; a fractional one sits between two integers
        from fractions import Fraction

        fa, fb = Fraction(a), Fraction(b)
        return (fa > fb) - (fa < fb)
    return (a > b) - (a < b)


def _collate(text: str, collation: str) -> str:
    if collation == "NOCASE":
        return text.translate(_ASCII_LOWER)
    if collation == "RTRIM":
        return text.rstrip(" ")
    return text


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def stored(value: Any, aff: str) -> Any:
    """The value a column of this affinity keeps when `value` is written into it."""
    if aff in ("INTEGER", "NUMERIC"):
        if isinstance(value, str):
            number = numeric_affinity(value)
            return value if number is None else number
        if isinstance(value, float) and _is_integral(value):
            return int(value)
        return value
    if aff == "REAL":
        if isinstance(value, str):
            number = numeric_affinity(value)
            return value if number is None else float(number)
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if aff == "TEXT" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return as_text(value)
    return value


def param_class(value: Any) -> str:
    """A bound value's class, part of a translation's cache key: n(ull), i(nteger within 2^53), I (beyond),
    r(eal), b(lob), or t + what numeric affinity makes of the text (i, r, t) + its arithmetic value's kind (i, r)."""
    if value is None:
        return "n"
    if isinstance(value, (bool, int)):
        return "i" if abs(int(value)) <= 2**53 else "I"
    if isinstance(value, float):
        return "r"
    if isinstance(value, str):
        number = numeric_affinity(value)
        kind = "t" if number is None else ("i" if isinstance(number, int) else "r")
        return "t" + kind + ("i" if isinstance(arithmetic_value(value), int) else "r")
    return "b"


def param_view(kind: str, value: Any) -> Any:
    """A bound text seen through one of SQLite's conversions (the engine binds it as an extra value)."""
    if kind == "aff":
        return numeric_affinity(value)
    if kind == "arith":
        return arithmetic_value(value)
    if kind == "int":
        return cast_integer(value)
    if kind == "real":
        return cast_real(value)
    if kind == "text":
        return as_text(value)
    if kind == "truth":
        return None if value is None else cast_real(value) != 0
    if kind == "stored":
        return stored(value, "NUMERIC")
    raise ValueError(kind)
