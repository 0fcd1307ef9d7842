"""The streaming reader of a D1 import: the same statements as the whole-text splitter however the file is cut
into pieces, triggers kept whole, an overlong statement refused as soon as it is seen; and literal INSERTs
turned into bound ones store exactly what the literals would (SQLite as the judge)."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_sim.bindings import limits
from memory_sim.bindings.d1_sql import split_statements, sql_literal
from memory_sim.errors import D1Error
from memory_sim.server.sql_stream import statements, with_parameters

PARTS = st.sampled_from([
    "SELECT 1", ";", " ", "\n", "'a;b'", "'it''s'", '"x;y"', "`q;`", "[b;r]", "-- c;\n", "/* ; */", "-", "/", "*",
    "''", "x", "--", "2.5e3",
])  # well-formed pieces: an unterminated quote or comment is an error either way, told when it runs


@settings(max_examples=300, deadline=None)
@given(st.lists(PARTS, max_size=30), st.data())
def test_any_cut_of_the_text_gives_the_splitters_statements(parts: list[str], data: st.DataObject) -> None:
    text = "".join(parts)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    assert list(statements(pieces)) == [_lead_trimmed(s) for s in split_statements(text)]


def _lead_trimmed(statement: str) -> str:
    """The statement without the blanks and comments before it (the streaming reader leaves them out)."""
    while True:
        rest = statement.lstrip()
        if rest.startswith("--"):
            end = rest.find("\n")
            rest = "" if end < 0 else rest[end + 1:]
        elif rest.startswith("/*"):
            end = rest.find("*/")
            rest = "" if end < 0 else rest[end + 2:]
        else:
            return rest
        statement = rest


def test_a_trigger_is_one_statement() -> None:
    text = "CREATE TRIGGER t AFTER INSERT ON a BEGIN UPDATE a SET v = 1; DELETE FROM b; END;\nSELECT 1;"
    assert list(statements([text[:30], text[30:]])) == [
        "CREATE TRIGGER t AFTER INSERT ON a BEGIN UPDATE a SET v = 1; DELETE FROM b; END", "SELECT 1"]


def test_an_overlong_statement_is_refused_before_it_is_all_read() -> None:
    def pieces() -> object:
        yield "SELECT 1;"
        yield "SELECT '" + "x" * 60_000
        yield "x" * 60_000
        raise AssertionError("read past the limit")

    with pytest.raises(D1Error, match="statement 2 is longer than 100,000 bytes"):
        list(statements(pieces()))  # type: ignore[arg-type]


VALUES = st.one_of(
    st.none(), st.integers(-(2**63) + 1, 2**63 - 1), st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=20),
    st.binary(max_size=8),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(VALUES, min_size=1, max_size=5))
def test_bound_literals_store_what_the_literals_store(values: list[object]) -> None:
    columns = ", ".join(f"c{n} {kind}" for n, kind in enumerate(["", "INTEGER", "REAL", "TEXT", "BLOB"][: len(values)]))
    literal = f"INSERT INTO t VALUES ({', '.join(sql_literal(v) for v in values)})"
    sql, params = with_parameters(literal)
    assert params, literal
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE TABLE t ({columns})")
    db.execute(literal)
    db.execute(sql, params)
    names = ", ".join(f"c{n}, typeof(c{n})" for n in range(len(values)))
    first, second = db.execute(f"SELECT {names} FROM t").fetchall()
    assert first == second


@pytest.mark.parametrize("sql", [
    "INSERT INTO t VALUES (1 + 1)", "INSERT INTO t VALUES (9223372036854775808)",
    "INSERT INTO t VALUES (-9223372036854775808)", "INSERT INTO t VALUES ('a'), ('b', 'c')",
    "INSERT INTO t VALUES ('a',)",
    "INSERT INTO t VALUES ('a'), ('b'),", "INSERT INTO t VALUES ('a'), (1 + 1)",
    "INSERT INTO t VALUES (TRUE)", "INSERT INTO t VALUES (1) RETURNING *", "UPDATE t SET a = 1",
    "INSERT INTO t VALUES (" + ", ".join(["1"] * 101) + ")",
])
def test_what_is_not_a_plain_row_of_literals_is_left_as_it_is(sql: str) -> None:
    assert with_parameters(sql) == (sql, ())


def test_rows_of_literals_are_bound_row_after_row() -> None:
    sql = "INSERT INTO \"t\" (a, [b]) VALUES ('x),(y', 1),\n  (NULL, -2.5) , (X'0aff', 'it''s')"
    assert with_parameters(sql) == ('INSERT INTO "t" (a, [b]) VALUES (?, ?), (?, ?), (?, ?)',
                                    ("x),(y", 1, None, -2.5, b"\n\xff", "it's"))


def test_comments_between_statements_count_toward_no_statement() -> None:
    """Before, a comment block over 100 KB ahead of a statement made the import refuse that statement."""
    header = "-- " + "licence text " * 10_000 + "\n/* " + "more " * 30_000 + "*/\n"
    assert len(header) > limits.D1_MAX_STATEMENT_BYTES
    found = list(statements([header, "CREATE TABLE t (a);\n", header, "INSERT INTO t VALUES (1);", header]))
    assert [s.strip() for s in found] == ["CREATE TABLE t (a)", "INSERT INTO t VALUES (1)"]
    with pytest.raises(D1Error, match="longer than"):  # the statement's own text still counts
        list(statements(["SELECT '" + "x" * (limits.D1_MAX_STATEMENT_BYTES + 1) + "';"]))


def test_a_nul_ends_the_statement_as_sqlite_reads_it() -> None:
    """SQLite stops reading SQL text at a NUL, inside a literal too; before, the import bound the literal, NUL and
    all, and stored it."""
    from memory_sim.local.d1.sqlite_engine import SqliteDatabase

    [statement] = list(statements(["INSERT INTO t VALUES ('a\0b');"]))
    assert statement == "INSERT INTO t VALUES ('a"
    db = SqliteDatabase(":memory:")
    db.exec("CREATE TABLE t (v TEXT)")
    sql, params = with_parameters(statement)
    with pytest.raises(D1Error, match="unrecognized token"):
        db.prepare(sql).bind(*params).run()
    assert db.prepare("SELECT count(*) AS n FROM t").first("n") == 0
