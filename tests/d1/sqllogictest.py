"""A runner for SQLite's sqllogictest format, shared by tests/d1/test_sqllogictest.py (a fixed slice in CI) and
scripts/bench_sqllogictest.py (a broad sample of the public corpus, with figures).

Each record runs three ways: raw sqlite3 (the control, as SQLite's own harness runs it), and through the D1
binding on the sqlite engine and on the DuckDB engine. A record passes when the answer matches the file's
expectation: `statement ok|error`, or a query's values formatted as the harness formats them (I: integer, R: %.3f,
T: text; NULL, "(empty)", printable ASCII), sorted by the record's sort mode, compared directly or through the MD5
of "value\\n" when the file gives a hash (`N values hashing to H`, written past `hash-threshold`).
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from memory_sim.bindings.d1_sql import split_statements
from memory_sim.errors import D1Error, D1Unsupported
from memory_sim.local.d1.duckdb_engine import DuckDBDatabase
from memory_sim.local.d1.sqlite_engine import SqliteDatabase

OUTCOMES = ("passed", "differs", "refused", "failed")  # refused: D1Unsupported, a one-line refusal by rule


@dataclass(frozen=True, slots=True)
class Record:
    kind: str  # "statement" or "query"
    sql: str
    line: int
    expect_error: bool = False
    types: str = ""
    sort: str = "nosort"
    values: tuple[str, ...] | None = None  # expected values, one per line
    hashed: tuple[int, str] | None = None  # (value count, md5) when the file gives a hash
    only: str = ""  # the engine an `onlyif` line keeps the record for


def parse(text: str, engines: tuple[str, ...] = ("sqlite",)) -> Iterator[Record]:
    """The records a file holds for a setup that answers to `engines` (skipif/onlyif honoured; `halt` under a
    condition that holds ends it). Every setup is "sqlite"; the DuckDB engine is also "d1-duckdb", which our own
    files (tests/d1/slt) name for what it refuses: `onlyif d1-duckdb` + `statement error`."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        block_start = i
        block: list[str] = []
        while i < len(lines) and lines[i].strip():
            block.append(lines[i])
            i += 1
        i += 1
        block = [b for b in block if not b.startswith("#")]
        applies, only = True, ""
        while block and block[0].split()[0] in ("skipif", "onlyif"):
            word, name = block[0].split()[:2]
            applies = applies and ((name in engines) == (word == "onlyif"))
            only = name if word == "onlyif" else only
            block.pop(0)
        if not block or not applies:
            continue
        head = block[0].split()
        if head[0] == "halt":
            return
        if head[0] == "statement":
            yield Record("statement", "\n".join(block[1:]), block_start + 1, expect_error=head[1] == "error",
                         only=only)
        elif head[0] == "query":
            yield replace(_query(head, block[1:], block_start + 1), only=only)


def _query(head: list[str], body: list[str], line: int) -> Record:
    cut = body.index("----") if "----" in body else len(body)
    sql, answer = "\n".join(body[:cut]), body[cut + 1 :]
    sort = head[2] if len(head) > 2 else "nosort"
    if len(answer) == 1 and " values hashing to " in answer[0]:
        count, digest = answer[0].split(" values hashing to ")
        return Record("query", sql, line, types=head[1], sort=sort, hashed=(int(count), digest.strip()))
    return Record("query", sql, line, types=head[1], sort=sort, values=tuple(answer))


def format_value(value: Any, kind: str) -> str:
    if value is None:
        return "NULL"
    if kind == "I":
        return str(_as_integer(value))
    if kind == "R":
        return _real_3f(_as_real(value))
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(_textual(value))
    if text == "":
        return "(empty)"
    return "".join(c if " " <= c <= "~" else "@" for c in text)


def _real_3f(value: float) -> str:
    """printf("%.3f") as SQLite's harness prints it: SQLite's printf keeps 16 significant digits (rounded) and
    writes zeros after them, where Python writes the double's exact digits."""
    if abs(value) < 1e13 or not math.isfinite(value):
        return f"{value:.3f}"
    return format(Decimal(f"{value:.15e}"), ".3f")


def _textual(value: Any) -> Any:
    if isinstance(value, float):
        return repr(value) if value != int(value) or abs(value) >= 1e15 else f"{value:.1f}"
    return value


def _as_integer(value: Any) -> int:
    if isinstance(value, (int, float)):
        return int(value)
    return int(_leading_number(str(value)))


def _as_real(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else _leading_number(str(value))


def _leading_number(text: str) -> float:
    """sqlite3_column_int64/double of a text: its longest numeric prefix, else 0."""
    text = text.strip()
    for end in range(len(text), 0, -1):
        try:
            return float(text[:end])
        except ValueError:
            continue
    return 0.0


def answer_values(rows: list[list[Any]], record: Record) -> list[str]:
    width = len(record.types)
    formatted = [[format_value(v, record.types[j] if j < width else "T") for j, v in enumerate(row)] for row in rows]
    if record.sort == "rowsort":
        formatted.sort()
    values = [v for row in formatted for v in row]
    if record.sort == "valuesort":
        values.sort()
    return values


def matches(values: list[str], record: Record) -> bool:
    if record.hashed is not None:
        count, digest = record.hashed
        return len(values) == count and hashlib.md5("".join(v + "\n" for v in values).encode()).hexdigest() == digest
    return values == list(record.values or ())


Runner = Callable[[str], list[list[Any]]]


def _statements(sql: str) -> list[str]:
    """The record's statements: pieces between semicolons, joined until SQLite calls them complete (a trigger's
    body holds semicolons of its own)."""
    out: list[str] = []
    pending = ""
    for piece in split_statements(sql):
        pending = f"{pending};{piece}" if pending else piece
        if sqlite3.complete_statement(pending + ";"):
            out.append(pending)
            pending = ""
    return [*out, pending] if pending else out


def raw_sqlite() -> tuple[Runner, Callable[[], None]]:
    """SQLite itself, as its harness runs it: the control."""
    connection = sqlite3.connect(":memory:", isolation_level=None)

    def run(sql: str) -> list[list[Any]]:
        return [list(row) for row in connection.execute(sql).fetchall()]

    return run, connection.close


def d1_binding(engine: str) -> tuple[Runner, Callable[[], None]]:
    database = SqliteDatabase() if engine == "sqlite" else DuckDBDatabase()

    def run(sql: str) -> list[list[Any]]:
        return database.prepare(sql).raw()

    return run, database.close


SETUPS: dict[str, Callable[[], tuple[Runner, Callable[[], None]]]] = {
    "raw sqlite3": raw_sqlite,
    "D1 sqlite engine": lambda: d1_binding("sqlite"),
    "D1 duckdb engine": lambda: d1_binding("duckdb"),
}
ENGINES = {"raw sqlite3": ("sqlite",), "D1 sqlite engine": ("sqlite",), "D1 duckdb engine": ("sqlite", "d1-duckdb")}


@dataclass
class Tally:
    outcomes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)  # outcome -> a few "file:line: why" lines
    rules: Counter[str] = field(default_factory=Counter)  # refusals by rule: the message up to its first ":" or ";"
    seconds: float = 0.0  # time spent running records on this setup
    cpu_seconds: float = 0.0  # the process's CPU time in it (all threads: DuckDB's too)

    def add(self, outcome: str, where: str, why: str, keep: int = 12) -> None:
        self.outcomes[outcome] += 1
        if outcome == "refused":
            self.rules[re.split(r"[:;]", why.removeprefix("D1_ERROR: "), maxsplit=1)[0].strip()] += 1
        if outcome != "passed" and len(self.examples.setdefault(outcome, [])) < keep:
            self.examples[outcome].append(f"{where}: {why}"[:300])

    @property
    def total(self) -> int:
        return sum(self.outcomes.values())

    def rate(self) -> float:
        return self.outcomes["passed"] / self.total if self.total else 0.0


def run_record(run: Runner, record: Record) -> tuple[str, str]:
    """(outcome, why) of one record on one setup. A record of several statements runs them in turn, as the
    harness's sqlite3_exec does; the last one's rows are the answer."""
    try:
        for sql in _statements(record.sql):
            rows = run(sql)
    except D1Unsupported as exc:
        if record.only == "d1-duckdb" and "sqlite engine" not in str(exc):
            return "failed", f"a refusal that does not name the sqlite engine: {exc}"
        return ("passed" if record.expect_error else "refused"), str(exc)
    except (D1Error, sqlite3.Error) as exc:
        if record.only == "d1-duckdb" and record.expect_error:
            return "failed", f"an error where a refusal was expected: {exc}"
        return ("passed" if record.expect_error else "failed"), str(exc)
    if record.kind == "statement":
        return ("differs" if record.expect_error else "passed"), "ran where an error was expected"
    values = answer_values(rows, record)
    return ("passed", "") if matches(values, record) else ("differs", f"got {values[:6]}")


def run_file(text: str, name: str, tallies: dict[str, Tally], max_records: int | None = None) -> None:
    """Every setup runs the file's records (up to `max_records`) on a fresh database of its own."""
    for setup, make in SETUPS.items():
        records = list(parse(text, ENGINES[setup]))[:max_records]
        tally = tallies.setdefault(setup, Tally())
        started, cpu = time.perf_counter(), time.process_time()
        run, close = make()
        try:
            for record in records:
                outcome, why = run_record(run, record)
                tally.add(outcome, f"{name}:{record.line}", f"{why} | {record.sql[:120]}")
        finally:
            close()
            tally.seconds += time.perf_counter() - started
            tally.cpu_seconds += time.process_time() - cpu
