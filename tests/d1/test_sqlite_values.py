"""SQLite's value rules in Python (sqlite_values) against sqlite3 itself, on generated texts and numbers that look
like numbers, almost do, or overflow."""

from __future__ import annotations

import math
import sqlite3
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_sim.local.d1.dialect import values as sv

NUMBERISH = st.one_of(
    st.from_regex(r"[ \t]{0,2}[+-]?\d{0,21}(\.\d{0,3})?([eE][+-]?\d{0,3})?[ x\t]{0,2}", fullmatch=True),
    st.sampled_from(["", " ", "0x10", "1_000", "abc", "12abc", "1e", "1e+", ".", "-", "+.5", "9223372036854775807",
                     "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "1e400", "12\x00",
                     "１２", "inf", "NaN", "1e18", "9007199254740993.0", "  -  12"]),
    st.text(max_size=6),
)
NUMBERS = st.one_of(
    st.integers(sv.INT64_MIN, sv.INT64_MAX),
    st.floats(allow_nan=False),
    st.sampled_from([0.0, -0.0, 2.0**53 + 1, 2.0**63, -(2.0**63), 1e15, 1e16, 0.1 + 0.2, 123456789012345.6]),
)
EXAMPLES = settings(max_examples=300, deadline=None, derandomize=True, database=None)


@pytest.fixture(scope="module")
def conn() -> Iterator[sqlite3.Connection]:
    c = sqlite3.connect(":memory:")
    c.execute("CREATE TABLE t (i INTEGER, r REAL, n NUMERIC, x TEXT)")
    yield c
    c.close()


def _typed(value: Any) -> tuple[str, Any]:
    if isinstance(value, float) and math.isnan(value):
        return ("real", "nan")
    return (sv.storage_class(value), value)


@EXAMPLES
@given(text=NUMBERISH)
def test_text_conversions_match_sqlite(conn: sqlite3.Connection, text: str) -> None:
    conn.execute("DELETE FROM t")
    conn.execute("INSERT INTO t VALUES (?, ?, ?, ?)", (text,) * 4)
    stored = conn.execute("SELECT i, n FROM t").fetchone()
    expected = sv.numeric_affinity(text)
    assert _typed(stored[0]) == _typed(text if expected is None else expected)
    assert _typed(stored[1]) == _typed(text if expected is None else expected)
    cast = conn.execute("SELECT CAST(?1 AS INTEGER), CAST(?1 AS REAL), CAST(?1 AS NUMERIC), ?1 + 0", (text,)).fetchone()
    ours = (sv.cast_integer(text), sv.cast_real(text), sv.cast_numeric(text), sv.arithmetic_value(text))
    assert [_typed(v) for v in cast] == [_typed(v) for v in ours], text


@EXAMPLES
@given(number=NUMBERS)
def test_number_conversions_match_sqlite(conn: sqlite3.Connection, number: int | float) -> None:
    got = conn.execute("SELECT CAST(?1 AS TEXT), CAST(?1 AS INTEGER), CAST(?1 AS NUMERIC)", (number,)).fetchone()
    assert [_typed(v) for v in got] == [_typed(sv.as_text(number)), _typed(sv.cast_integer(number)),
                                        _typed(sv.cast_numeric(number))]


VALUES = st.one_of(st.none(), NUMBERS, NUMBERISH, st.binary(max_size=3))


@EXAMPLES
@given(a=VALUES, b=VALUES, collation=st.sampled_from(["BINARY", "NOCASE", "RTRIM"]))
def test_comparison_of_values_matches_sqlite(conn: sqlite3.Connection, a: Any, b: Any, collation: str) -> None:
    got = conn.execute(f"SELECT ?1 < ?2 COLLATE {collation}, ?1 = ?2 COLLATE {collation}", (a, b)).fetchone()
    order = sv.compare(a, b, collation)
    assert got == ((None, None) if order is None else (int(order < 0), int(order == 0)))


@EXAMPLES
@given(value=VALUES, column=st.sampled_from(["i", "r", "n", "x"]))
def test_affinity_in_comparisons_matches_sqlite(conn: sqlite3.Connection, value: Any, column: str) -> None:
    conn.execute("DELETE FROM t")
    conn.execute("INSERT INTO t VALUES (3, 3.0, 3, '3')")
    got = conn.execute(f"SELECT {column} = ?1, {column} < ?1 FROM t", (value,)).fetchone()
    declared = {"i": "INTEGER", "r": "REAL", "n": "NUMERIC", "x": "TEXT"}[column]
    stored = sv.apply_affinity(3, declared)
    left, right = sv.comparison_affinity(declared, "")
    order = sv.compare(sv.apply_affinity(stored, left), sv.apply_affinity(value, right))
    assert got == ((None, None) if order is None else (int(order == 0), int(order < 0)))


@EXAMPLES
@given(value=VALUES)
def test_stored_values_match_sqlite(conn: sqlite3.Connection, value: Any) -> None:
    conn.execute("DELETE FROM t")
    conn.execute("INSERT INTO t VALUES (?1, ?1, ?1, ?1)", (value,))
    got = conn.execute("SELECT i, r, n, x FROM t").fetchone()
    assert [_typed(v) for v in got] == [_typed(sv.stored(value, a)) for a in ("INTEGER", "REAL", "NUMERIC", "TEXT")]


def test_affinity_of_declared_types() -> None:
    cases = {"INTEGER": "INTEGER", "BIGINT": "INTEGER", "POINT": "INTEGER", "VARCHAR(10)": "TEXT", "CLOB": "TEXT",
             "BLOB": "BLOB", "": "BLOB", "REAL": "REAL", "DOUBLE PRECISION": "REAL", "FLOATING POINT": "INTEGER", "FLOAT": "REAL",
             "NUMERIC": "NUMERIC", "DECIMAL(10,2)": "NUMERIC", "BOOLEAN": "NUMERIC", "DATETIME": "NUMERIC",
             "STRING": "NUMERIC", "JSON": "NUMERIC"}
    assert {k: sv.affinity(k) for k in cases} == cases


def test_real_text_examples() -> None:
    assert [sv.real_text(x) for x in (1e20, 0.1, 1.0, -0.0, 1e15, 100.0, float("inf"), 5e-324)] == [
        "1.0e+20", "0.1", "1.0", "0.0", "1.0e+15", "100.0", "Inf", "4.94065645841247e-324"]
