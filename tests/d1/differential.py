"""The differential fuzzer of the D1 engines, shared by tests/d1/test_differential.py (a fixed seed and budget in CI)
and scripts/fuzz_d1.py (longer runs, with figures): hypothesis writes expressions and statements over a small
schema of mixed affinities (INTEGER, REAL, TEXT, BLOB, NUMERIC, DATETIME), with NULLs, texts that look like numbers,
integers at the edges of 64 bits, blobs, LIKE/GLOB, CAST, comparisons across types, aggregates and ORDER BY over
mixed types; each runs on sqlite3 (D1's own engine) and on the DuckDB engine. A pair differs unless both answer the
same rows (same values, same Python types; REAL sums within 1e-12, where SQLite versions sum differently), both fail
with the same message, or DuckDB refuses (D1Unsupported: a one-line message naming the construct)."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from memory_sim.bindings.d1_sql import sql_literal
from memory_sim.errors import D1Error, D1Unsupported
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

SCHEMA = [
    "CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, b BLOB, n NUMERIC, d DATETIME)",
    "CREATE TABLE p (k TEXT PRIMARY KEY, v INTEGER)",
    "CREATE TABLE c (id INTEGER PRIMARY KEY, k TEXT REFERENCES p(k), w REAL)",
    "CREATE TABLE q (id INTEGER PRIMARY KEY, u TEXT UNIQUE, m INTEGER NOT NULL DEFAULT 0)",
    # For INDEXED BY; on p, not t: an index on t would change the order SQLite's aggregates read t's values in
    # (sum() overflows, or not, on the way), which no other engine can follow.
    "CREATE INDEX p_v ON p (v)",
    "CREATE VIEW one AS SELECT i FROM t WHERE id < 6",  # a one-column view, for `x IN one`
]
COLUMNS = ["id", "i", "r", "s", "b", "n", "d"]
INTS = [0, 1, -1, 2, 3, 7, 10, -42, 2**31, 2**53 + 1, 2**62, 2**63 - 1, -(2**63)]
REALS = [0.0, 0.5, -1.5, 2.5, 3.0, 1e20, 1e-7, 0.1, 123.456, 2.0**53, -2.0**63, 7.0]
TEXTS = ["", "a", "B", "abc", "Abc", "3", "3.0", " 12 ", "1e3", "12abc", "0x10", "Ä", "ä", "a_b", "50%", "-7", "x y"]
BLOBS = [b"", b"\x00", b"ab", b"\xff\x01", b"3"]
DATES = ["2024-01-01", "2024-01-01 10:00:00", "2023-12-31 23:59:59", "not a date"]
# Rows of t: every column's kinds of value, mixed types in the NUMERIC column.
ROWS = [
    (1, 3, 2.5, "abc", b"ab", 5, "2024-01-01"),
    (2, -42, 0.5, "3", b"\x00", 2.5, "2024-01-01 10:00:00"),
    (3, 2**63 - 1, 1e20, " 12 ", None, "xyz", None),
    (4, -(2**63), -1.5, "Ä", b"", "7", "2023-12-31 23:59:59"),
    (5, 0, 0.0, "", b"\xff\x01", None, "not a date"),
    (6, None, None, None, None, -0.5, None),
    (7, 7, 7.0, "12abc", b"3", 2**53 + 1, "2024-01-01"),
    (8, 10, 2.0**53, "a_b", b"ab", "1e3", "2024-01-01"),
    (9, 3, 0.1, "B", None, 3.0, None),
    (10, 2**53 + 1, 123.456, "50%", b"\x00", b"b", "2024-01-01 10:00:00"),
    (11, -1, 3.0, "ä", None, 0, None),
    (12, 2, -2.0**63, "3.0", b"\xff\x01", "abc", "2024-01-01"),
]
PARENTS = [("a", 1), ("b", 2), ("c", None)]
CHILDREN = [(1, "a", 0.5), (2, "b", 1.5), (3, None, 2.5), (4, "a", None)]
Q_ROWS = [(1, "a", 1), (3, "b", 2)]  # rows of q: several-row INSERTs with ids, conflicts and NOT NULL


VALUES = st.one_of(st.sampled_from(INTS), st.sampled_from(REALS), st.sampled_from(TEXTS), st.sampled_from(BLOBS),
                   st.none())
REST_VALUES = st.sampled_from(TEXTS + [str(i) for i in INTS] + [repr(r) for r in REALS])  # what REST sends: text


@dataclass
class Statement:
    sql: str
    params: list[Any] = field(default_factory=list)


@st.composite
def expressions(draw: st.DrawFn, params: list[Any], depth: int = 0, columns: tuple[str, ...] = tuple(COLUMNS)) -> str:
    """One SQLite expression; `params` collects the values its `?` placeholders are bound to."""
    def sub() -> str:
        return draw(expressions(params, depth + 1, columns))

    leaf = depth >= 3 or draw(st.integers(0, 9)) < 3 + depth
    if leaf:
        kinds = ["column", "column", "column"] if columns else []
        kind = draw(st.sampled_from(kinds + ["literal", "literal", "param"]))
        if kind == "column":
            return draw(st.sampled_from(columns))
        if kind == "literal":
            return sql_literal(draw(VALUES))
        params.append(draw(st.one_of(VALUES, REST_VALUES)))
        return "?"
    shape = draw(st.sampled_from([
        "arith", "arith", "concat", "compare", "compare", "compare", "logic", "not", "neg", "like", "glob",
        "between", "in", "case", "case_base", "cast", "cast", "function", "function", "function",
    ]))
    if shape == "arith":
        return f"{sub()} {draw(st.sampled_from(['+', '-', '*', '/', '%']))} {sub()}"
    if shape == "concat":
        return f"{sub()} || {sub()}"
    if shape == "compare":
        op = draw(st.sampled_from(["=", "==", "<>", "!=", "<", "<=", ">", ">=", "IS", "IS NOT"]))
        return f"{sub()} {op} {sub()}"
    if shape == "logic":
        return f"({sub()} {draw(st.sampled_from(['AND', 'OR']))} {sub()})"
    if shape == "not":
        return f"NOT {sub()}"
    if shape == "neg":
        return f"-{sub()}" if draw(st.booleans()) else f"+{sub()}"
    if shape == "like":
        pattern = draw(st.sampled_from(["'a%'", "'%b%'", "'_'", "'3%'", "'A_C'", "'%'", "'ä'", "'1%'", "?"]))
        if pattern == "?":
            params.append(draw(st.sampled_from(["a%", "%3", "_b_"])))
        return f"{sub()} {draw(st.sampled_from(['LIKE', 'NOT LIKE']))} {pattern}"
    if shape == "glob":
        pattern = draw(st.sampled_from(["'a*'", "'*3*'", "'?'", "'[a-c]*'", "'[^a]*'", "'A*'"]))
        return f"{sub()} GLOB {pattern}"
    if shape == "between":
        return f"{sub()} {draw(st.sampled_from(['BETWEEN', 'NOT BETWEEN']))} {sub()} AND {sub()}"
    if shape == "in":
        items = ", ".join(sub() for _ in range(draw(st.integers(1, 3))))
        return f"{sub()} {draw(st.sampled_from(['IN', 'NOT IN']))} ({items})"
    if shape == "case":
        return f"CASE WHEN {sub()} THEN {sub()} ELSE {sub()} END"
    if shape == "case_base":
        return f"CASE {sub()} WHEN {sub()} THEN {sub()} ELSE {sub()} END"
    if shape == "cast":
        return f"CAST({sub()} AS {draw(st.sampled_from(['INTEGER', 'REAL', 'TEXT', 'BLOB', 'NUMERIC']))})"
    name, arity = draw(st.sampled_from(FUNCTIONS))
    return f"{name}({', '.join(sub() for _ in range(arity))})"


FUNCTIONS = [
    ("abs", 1), ("length", 1), ("upper", 1), ("lower", 1), ("typeof", 1), ("coalesce", 2), ("ifnull", 2),
    ("nullif", 2), ("max", 2), ("min", 2), ("substr", 2), ("substr", 3), ("instr", 2), ("replace", 3), ("round", 1),
    ("round", 2), ("hex", 1), ("quote", 1), ("trim", 1), ("iif", 3), ("sign", 1), ("char", 1), ("unicode", 1),
    ("date", 1), ("datetime", 2), ("strftime", 2), ("julianday", 1), ("json_extract", 2), ("json_array", 2),
    ("ltrim", 2), ("printf", 2), ("zeroblob", 1), ("likely", 1),
]
JSON_DOCS = ['{"a": 1, "b": 2.5, "c": null, "d": true, "e": "3", "f": [1, "x"], "g": {"h": -7}}',
             '[0, "0", 1.0, null, false, 9223372036854775807, 12345678901234567890, "a", [], {}]', '"abc"', "3"]
AGGREGATES = ["count", "sum", "avg", "min", "max", "total", "group_concat"]


@st.composite
def reads(draw: st.DrawFn) -> Statement:
    """A query over the fixed rows of t (and p, c)."""
    params: list[Any] = []
    shape = draw(st.sampled_from(["select", "select", "where", "where", "order", "order", "aggregate", "group",
                                  "bare", "limit", "distinct", "compound", "in_select", "join", "cte", "window",
                                  "scalar", "exists", "json", "corpus", "corpus"]))

    def e(columns: tuple[str, ...] = tuple(COLUMNS)) -> str:
        return draw(expressions(params, columns=columns))

    if shape == "select":
        return Statement(f"SELECT {e()}, {e()} FROM t ORDER BY id", params)
    if shape == "where":
        return Statement(f"SELECT id FROM t WHERE {e()} ORDER BY id", params)
    if shape == "order":
        key, direction = e(), draw(st.sampled_from(["", " DESC"]))
        return Statement(f"SELECT id, {key} FROM t ORDER BY {key}{direction}, id", params + params)
    if shape == "aggregate":
        agg, value = draw(st.sampled_from(AGGREGATES)), e()
        where = f" WHERE {e()}" if draw(st.booleans()) else ""
        return Statement(f"SELECT {agg}({value}) FROM t{where}", params)
    if shape == "group":
        column, agg = draw(st.sampled_from(["i", "s", "d", "n", "r"])), draw(st.sampled_from(AGGREGATES))
        return Statement(f"SELECT {column}, count(*), {agg}({e()}) FROM t GROUP BY {column} ORDER BY {column}", params)
    if shape == "bare":
        return Statement(f"SELECT {e(())}", params)
    if shape == "limit":
        count = draw(st.sampled_from(["2", "-1", "0", "'2'", "1.0", "?"]))
        if count == "?":
            params.append(draw(st.sampled_from(["2", 3, -1, "x", 1.5])))
        offset = draw(st.sampled_from(["", " OFFSET 1", " OFFSET -3"]))
        return Statement(f"SELECT id FROM t ORDER BY id LIMIT {count}{offset}", params)
    if shape == "distinct":
        return Statement(f"SELECT DISTINCT {e()} FROM t", params)
    if shape == "compound":
        return Statement(f"SELECT {e()} FROM t UNION SELECT {e()} FROM t", params)
    if shape == "in_select":
        column = draw(st.sampled_from(["i", "s", "r", "n"]))
        return Statement(f"SELECT id FROM t WHERE {e()} IN (SELECT {column} FROM t) ORDER BY id", params)
    if shape == "cte":
        inner = e()
        outer = e(("x", "id"))
        return Statement(f"WITH q AS (SELECT id, {inner} AS x FROM t) SELECT id, {outer} FROM q ORDER BY id", params)
    if shape == "window":
        key = e()
        return Statement(f"SELECT id, row_number() OVER (ORDER BY {key}, id) AS rn FROM t ORDER BY id", params)
    if shape == "scalar":
        column = draw(st.sampled_from(["i", "s", "r", "n", "b"]))
        return Statement(f"SELECT id, {e()} > (SELECT max({column}) FROM t) FROM t ORDER BY id", params)
    if shape == "exists":
        return Statement(f"SELECT id FROM t AS o WHERE EXISTS (SELECT 1 FROM t WHERE t.id < o.id AND {e()}) "
                         "ORDER BY id", params)
    if shape == "corpus":
        return _corpus_construct(draw, e, params)
    if shape == "json":  # json_each / json_tree rows beside t's: typed key, value and atom in any expression
        doc, function = draw(st.sampled_from(JSON_DOCS)), draw(st.sampled_from(["json_each", "json_tree"]))
        value = e(("j.key", "j.value", "j.atom", "j.type", "j.fullkey", "t.i", "t.s", "t.r"))
        return Statement(f"SELECT t.id, j.id, {value} FROM t, {function}({sql_literal(doc)}) AS j WHERE t.id < 3 "
                         "ORDER BY t.id, j.id", params)
    joined = e(("c.id", "c.k", "c.w", "p.k", "p.v"))
    return Statement(f"SELECT c.id, {joined} FROM c LEFT JOIN p ON p.k = c.k ORDER BY c.id", params)


def _corpus_construct(draw: st.DrawFn, e: Any, params: list[Any]) -> Statement:
    """What SQLite's sqllogictest corpus found the DuckDB engine answering otherwise or refusing: IN a table, IN an
    empty list, INDEXED BY / NOT INDEXED, an aggregate beside a NULL or a constant where no row matches, DISTINCT
    aggregates, total() and avg() over any values, sum() past 64 bits on the way, recursive CTEs, coalesce() of a
    constant beside a column outside GROUP BY, SELECT DISTINCT of one row of mixed type."""
    kind = draw(st.sampled_from(["in_table", "in_empty", "indexed", "null_aggregate", "distinct", "total",
                                 "recursive", "coalesce_group", "distinct_one_row"]))
    negated = draw(st.sampled_from(["IN", "NOT IN"]))
    if kind == "in_table":
        return Statement(f"SELECT id FROM t WHERE {e()} {negated} {draw(st.sampled_from(['one', 'p']))} ORDER BY id",
                         params)
    if kind == "in_empty":
        return Statement(f"SELECT id, {e()} {negated} () FROM t ORDER BY id", params)
    if kind == "indexed":
        hint = draw(st.sampled_from(["INDEXED BY p_v", "NOT INDEXED", "INDEXED BY nope"]))
        return Statement(f"SELECT k FROM p {hint} WHERE v > {e(())} ORDER BY k", params)
    if kind == "recursive":  # the anchor's n has no affinity; x is of any type, row by row
        step = e(("x", "n"))
        return Statement(f"WITH RECURSIVE c(n, x) AS (SELECT 1, {e(())} UNION ALL SELECT n + 1, {step} FROM c "
                         f"WHERE n < {draw(st.integers(1, 4))}) SELECT n, x FROM c ORDER BY n", params)
    if kind == "coalesce_group":
        return Statement(f"SELECT i, coalesce({e(())}, s) FROM t GROUP BY i ORDER BY i", params)
    agg = draw(st.sampled_from([a for a in AGGREGATES if a != "group_concat"]))
    if kind == "distinct_one_row":
        return Statement(f"SELECT DISTINCT nullif({agg}({e()}), {e(())}) FROM t WHERE {e()}", params)
    if kind == "null_aggregate":
        op = draw(st.sampled_from(["*", "+", "=", "<", "||", "%", "IS", "AND"]))
        return Statement(f"SELECT {e(())} {op} {agg}({e()}) FROM t WHERE {e()}", params)
    if kind == "distinct":
        return Statement(f"SELECT {agg}(DISTINCT {e()}) FROM t", params)
    return Statement(f"SELECT total({e()}), avg({e()}) FROM t WHERE {e()}", params)


@st.composite
def writes(draw: st.DrawFn) -> list[Statement]:
    """One to three writes (the table is compared after each)."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        params: list[Any] = []
        kind = draw(st.sampled_from(["insert", "insert", "update", "delete", "replace", "upsert", "fk", "rows"]))
        if kind == "insert":
            cols = draw(st.lists(st.sampled_from(COLUMNS[1:]), min_size=1, max_size=3, unique=True))
            values = []
            for _ in cols:
                if draw(st.booleans()):
                    params.append(draw(st.one_of(VALUES, REST_VALUES)))
                    values.append("?")
                else:
                    values.append(draw(expressions(params, depth=2, columns=())))
            out.append(Statement(f"INSERT INTO t ({', '.join(cols)}) VALUES ({', '.join(values)})", params))
        elif kind == "update":
            column = draw(st.sampled_from(COLUMNS[1:]))
            value = draw(expressions(params, depth=1))
            out.append(Statement(f"UPDATE t SET {column} = {value} WHERE id = {draw(st.integers(1, 13))}", params))
        elif kind == "delete":
            out.append(Statement(f"DELETE FROM t WHERE {draw(expressions(params, depth=1))}", params))
        elif kind == "replace":
            key = sql_literal(draw(st.sampled_from(['a', 'b', 'z'])))
            out.append(Statement(f"INSERT OR REPLACE INTO p (k, v) VALUES ({key}, {draw(st.integers(-3, 3))})"))
        elif kind == "upsert":
            out.append(Statement(
                f"INSERT INTO p (k, v) VALUES ({sql_literal(draw(st.sampled_from(['a', 'c', 'y'])))}, ?) "
                "ON CONFLICT (k) DO UPDATE SET v = excluded.v + 1", [draw(st.one_of(VALUES, REST_VALUES))]))
        elif kind == "rows":
            out.append(_several_rows(draw, params))
        else:
            k = draw(st.sampled_from(["a", "b", "q", None]))
            out.append(draw(st.sampled_from([
                Statement("INSERT INTO c (k, w) VALUES (?, 1.0)", [k]),
                Statement("DELETE FROM p WHERE k = ?", [k]),
                Statement("UPDATE c SET k = ? WHERE id = 1", [k]),
            ])))
    return out


def _several_rows(draw: st.DrawFn, params: list[Any]) -> Statement:
    """A several-row INSERT into q: ids listed or not (NULL, explicit, negative, the largest), conflicts on the
    key or the UNIQUE column (OR IGNORE, OR REPLACE, ON CONFLICT), NULL into the NOT NULL column."""
    listed = draw(st.booleans())
    rows = []
    for _ in range(draw(st.integers(2, 3))):
        cells = [sql_literal(draw(st.sampled_from([None, 1, 5, 20, -3, 2**63 - 1])))] if listed else []
        cells.append(sql_literal(draw(st.sampled_from(["a", "b", "c", None]))))
        if draw(st.booleans()):
            params.append(draw(st.one_of(VALUES, REST_VALUES)))
            cells.append("?")
        else:
            cells.append(sql_literal(draw(st.sampled_from([1, 2, None]))))
        rows.append(f"({', '.join(cells)})")
    head = draw(st.sampled_from(["INSERT", "INSERT OR IGNORE", "INSERT OR REPLACE"]))
    tails = ["", " ON CONFLICT DO NOTHING", " ON CONFLICT (u) DO UPDATE SET m = excluded.m + 1",
             " ON CONFLICT (id) DO UPDATE SET u = excluded.u"]
    tail = draw(st.sampled_from(tails)) if head == "INSERT" else ""
    columns = "(id, u, m)" if listed else "(u, m)"
    return Statement(f"{head} INTO q {columns} VALUES {', '.join(rows)}{tail}", params)


# --- running and comparing ----------------------------------------------------------------------------------------
def run(db: Any, statement: Statement) -> tuple[str, Any]:
    try:
        return "ok", db.prepare(statement.sql).bind(*statement.params).all().results
    except D1Unsupported as exc:
        return "refused", str(exc)
    except D1Error as exc:
        return "error", str(exc)
    except Exception as exc:  # noqa: BLE001 - an engine bug: reported as a difference, the run goes on
        return "crash", f"{type(exc).__name__}: {exc}"


def _same_value(a: Any, b: Any, loose: bool) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or (loose and math.isclose(a, b, rel_tol=1e-12))
    return bool(a == b)


_LOOSE = re.compile(r"\b(sum|avg|total)\s*\(", re.I)


def difference(statement: Statement, ref: tuple[str, Any], duck: tuple[str, Any]) -> str | None:
    """Why the two outcomes differ, or None when they agree (a refusal agrees with anything)."""
    (ref_kind, ref_value), (duck_kind, duck_value) = ref, duck
    if duck_kind == "refused" or (ref_kind == "ok" and row_error(duck_kind, duck_value)):
        return None
    if ref_kind != duck_kind:
        return f"sqlite {ref_kind}: {str(ref_value)[:200]}; duckdb {duck_kind}: {str(duck_value)[:200]}"
    if ref_kind == "error":  # the same error; which row raised it first may differ (so may a value it quotes)
        same = _error_shape(ref_value) == _error_shape(duck_value) or other_constraint(statement, ref, duck)
        return None if same else f"error texts: sqlite {ref_value!r}; duckdb {duck_value!r}"
    ordered = "ORDER BY" in statement.sql.upper()
    rows_a = [list(r.values()) for r in ref_value]
    rows_b = [list(r.values()) for r in duck_value]
    if not ordered:
        rows_a, rows_b = sorted(rows_a, key=repr), sorted(rows_b, key=repr)
    loose = bool(_LOOSE.search(statement.sql))
    if ref_value and duck_value and list(ref_value[0]) != list(duck_value[0]):
        return f"column names: sqlite {list(ref_value[0])}; duckdb {list(duck_value[0])}"
    if len(rows_a) != len(rows_b) or any(
        len(x) != len(y) or not all(_same_value(p, q, loose) for p, q in zip(x, y)) for x, y in zip(rows_a, rows_b)
    ):
        return f"rows: sqlite {rows_a[:6]!r}; duckdb {rows_b[:6]!r}"
    return None


# Errors SQLite's functions raise for a value (a row): DuckDB raises them for every row it evaluates, which may
# include rows SQLite's plan never reached (it stops an EXISTS at the first match, short-circuits AND and CASE).
_ROW_ERRORS = re.compile(r"string or blob too big|malformed JSON|JSON path error|JSON cannot hold|bad JSON path")


def row_error(kind: str, message: Any) -> bool:
    """The DuckDB engine failed with SQLite's own error of a function for a row: loud, never a different answer."""
    return kind == "error" and bool(_ROW_ERRORS.search(str(message)))


_SEVERAL_ROWS = re.compile(r"^\s*INSERT\b.*\bVALUES\s*\(.*\)\s*,\s*\(", re.I | re.S)


def other_constraint(statement: Statement, ref: tuple[str, Any], duck: tuple[str, Any]) -> bool:
    """A documented difference (docs/d1.md): an INSERT of several rows that break different constraints fails on
    both engines, nothing stored; SQLite names the first row's, DuckDB the first it checks."""
    both = ref[0] == duck[0] == "error" and all(str(v).endswith(": SQLITE_CONSTRAINT") for v in (ref[1], duck[1]))
    return both and bool(_SEVERAL_ROWS.search(statement.sql))


def _error_shape(message: str) -> str:
    return re.sub(r"'[^']*'|\b\d+\b", "…", message)


_RULES = [
    (re.compile(r" in (INTEGER|REAL|TEXT|BLOB|NUMERIC) column "), "a value of another type stored in a column of {} affinity"),
    (re.compile(r"compound SELECT whose column"), "a compound SELECT mixing types in one column"),
    (re.compile(r"^integer overflow in"), "integer overflow in an INTEGER expression"),
]


def rule_of(message: str) -> str:
    """A refusal's rule: the rule it names, or its message up to the first colon or semicolon."""
    text = message.removeprefix("D1_ERROR: ").removesuffix(": SQLITE_ERROR")
    for pattern, name in _RULES:
        found = pattern.search(text)
        if found:
            return name.format(*found.groups())
    return re.split(r"[:;]", text, maxsplit=1)[0].strip()


@dataclass
class Tally:
    ran: int = 0
    agreed_rows: int = 0
    agreed_errors: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    differences: list[dict[str, Any]] = field(default_factory=list)

    def record(self, statement: Statement, ref: tuple[str, Any], duck: tuple[str, Any]) -> str | None:
        self.ran += 1
        why = difference(statement, ref, duck)
        if why is not None:
            self.differences.append({"sql": statement.sql, "params": repr(statement.params), "why": why})
        elif duck[0] == "refused":
            self.refused[rule_of(duck[1])] += 1
        elif ref[0] == "error" and _error_shape(ref[1]) != _error_shape(duck[1]):  # other_constraint()
            self.refused["(not a refusal) a several-row INSERT broke constraints; each engine named another"] += 1
        elif ref[0] == "ok" and row_error(*duck):
            self.refused["(not a refusal) SQLite's own error for a row SQLite's plan never evaluated"] += 1
        elif duck[0] == "ok":
            self.agreed_rows += 1
        else:
            self.agreed_errors += 1
        return why


def new_pair(rows: bool = True) -> tuple[SqliteDatabase, DuckDBDatabase]:
    """sqlite3 and DuckDB with the schema and the fixed rows (inserted with bound values, as the binding does)."""
    pair = (SqliteDatabase(), DuckDBDatabase())
    for db in pair:
        for sql in SCHEMA:
            db.prepare(sql).run()
        if rows:
            insert = db.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)")
            db.batch([insert.bind(*row) for row in ROWS])
            db.batch([db.prepare("INSERT INTO p VALUES (?, ?)").bind(*row) for row in PARENTS])
            db.batch([db.prepare("INSERT INTO c VALUES (?, ?, ?)").bind(*row) for row in CHILDREN])
            db.batch([db.prepare("INSERT INTO q VALUES (?, ?, ?)").bind(*row) for row in Q_ROWS])
    return pair


def table_state(db: Any) -> tuple[str, Any]:
    return run(db, Statement("SELECT * FROM t ORDER BY id"))


def apply_writes(pair: tuple[Any, Any], statements: list[Statement], tally: Tally) -> str | None:
    """Each write on DuckDB first; on sqlite3 only where DuckDB did not refuse (so both hold the same rows); then
    the tables compared."""
    ref_db, duck_db = pair
    for statement in statements:
        duck = run(duck_db, statement)
        ref = run(ref_db, statement) if duck[0] != "refused" else ("refused", "")
        why = tally.record(statement, ref, duck)
        if why is not None:
            return f"{statement.sql} {statement.params!r}: {why}"
        for probe in (Statement("SELECT * FROM t ORDER BY id"), Statement("SELECT * FROM p ORDER BY k"),
                      Statement("SELECT * FROM c ORDER BY id"), Statement("SELECT * FROM q ORDER BY id")):
            state = difference(probe, run(ref_db, probe), run(duck_db, probe))
            if state is not None:
                return f"after {statement.sql} {statement.params!r}: {state}"
    return None
