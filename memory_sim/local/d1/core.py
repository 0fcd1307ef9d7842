"""The D1 binding object shared by both local engines: statements, binding (with the binding's own type rules,
`bindings.d1.check_value`), limits, batches and `exec`, and the shaping of results into D1's form. Engines only
run one statement at a time behind the small `Engine` seam, so sqlite3 and DuckDB answer through the same front
door.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from memory_sim.bindings import limits
from memory_sim.bindings.d1 import (
    D1ExecResult,
    D1Meta,
    D1PreparedStatement,
    D1Result,
    D1Value,
    check_value,
    first_of,
    local_meta,
)
from memory_sim.bindings.d1_sql import first_keyword, placeholders
from memory_sim.errors import D1Error, D1ExecError, D1StatementError
from memory_sim.local.d1.time_limit import D1_QUERY_TIME_LIMIT_S, D1TimeLimit

_TABLES = (  # the user's tables, as SQLite's catalogue lists them
    r"SELECT name FROM sqlite_master WHERE type = 'table'"
    r" AND name NOT LIKE 'sqlite\_%' ESCAPE '\' AND name NOT LIKE '\_cf\_%' ESCAPE '\'"
)
_TRANSACTION_WORDS = {"BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"}


@dataclass(slots=True)
class Outcome:
    """What an engine reports for one statement."""

    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    changes: int = 0
    last_row_id: int = 0
    changed_db: bool = False
    plain: bool = False  # the engine vouches that no value needs shape_value (no blobs, booleans, decimals)
    tail: list[list[Any]] | None = None  # further rows, one list per column, after `rows`

    @property
    def row_count(self) -> int:
        return len(self.rows) + (len(self.tail[0]) if self.tail else 0)


@dataclass(slots=True)
class ScriptTotals:
    """What a script (a D1 import) did, summed over its statements: no result rows are kept."""

    statements: int = 0
    duration: float = 0.0
    rows_read: int = 0
    rows_written: int = 0
    changes: int = 0
    changed_db: bool = False
    last_row_id: int = 0
    size_after: int = 0


@dataclass(frozen=True, slots=True)
class RawResult:
    """One statement's result as D1's REST `/raw` shapes it: column names (even without rows), rows as lists."""

    columns: list[str]
    rows: list[list[Any]]
    meta: D1Meta

    def to_json(self) -> dict[str, Any]:
        return {"success": True, "meta": self.meta.to_json(), "results": {"columns": self.columns, "rows": self.rows}}


class CompactFailed(D1Error):
    """`Engine.compact` failed after letting go of its files: `engine` is the one opened again over them."""

    def __init__(self, message: str, engine: Engine) -> None:
        super().__init__(message)
        self.engine = engine


class Engine(Protocol):
    """One SQL engine; called under the database's lock, one statement at a time."""

    def execute(self, sql: str, params: Sequence[D1Value]) -> Outcome: ...

    def execute_run(self, sql: str, param_rows: Sequence[Sequence[D1Value]]) -> list[Outcome] | None:
        """The first statements of a run of one SQL text, run as one: their outcomes (fewer than the run: the
        rest run one by one; None or []: all of them do)."""
        ...

    def begin(self) -> None: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...

    def size(self) -> int: ...

    def time_limit(self, deadline: float | None) -> None:
        """Stop whatever statement runs once `time.monotonic()` passes `deadline` (None: no limit); the statement
        then fails with any D1Error, which the database reports as D1's time-limit error."""
        ...

    def backup(self, dest: Path) -> None:
        """Write a consistent copy of the database to the file `dest`, through the engine's own mechanism."""
        ...

    def compact(self) -> Engine:
        """Leaves no deleted or overwritten value in the database's files (erasure); returns the engine to use
        from now on (itself, or one opened afresh over a rewritten file)."""
        ...

    def close(self) -> None: ...


def shape_value(value: Any) -> Any:
    """Engine values into what D1 returns: blobs as lists of byte values, booleans as 1/0."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return list(bytes(value))
    if isinstance(value, Decimal):  # DuckDB's decimal literals and round(); SQLite's REAL
        return float(value)
    return value


def check_statement(sql: str, values: Sequence[D1Value]) -> None:
    if len(sql.encode()) > limits.D1_MAX_STATEMENT_BYTES:
        raise D1Error(f"statement too long (over {limits.D1_MAX_STATEMENT_BYTES} bytes): SQLITE_TOOBIG")
    if first_keyword(sql) in _TRANSACTION_WORDS:
        raise D1Error("D1 does not support BEGIN/COMMIT/SAVEPOINT in SQL; use batch() for a transaction")
    needed = placeholders(sql).count
    if len(values) > limits.D1_MAX_BOUND_PARAMETERS:
        raise D1Error(f"too many SQL variables ({len(values)}; at most {limits.D1_MAX_BOUND_PARAMETERS}): SQLITE_ERROR")
    if len(values) != needed:
        raise D1Error(f"Wrong number of parameter bindings for SQL query (expected {needed}, got {len(values)})")


@dataclass(frozen=True, slots=True)
class Statement:
    """A prepared statement; `bind` returns a new one, as in D1."""

    db: D1CoreDatabase
    sql: str
    values: tuple[D1Value, ...] = ()

    def bind(self, *values: D1Value) -> Statement:
        return Statement(self.db, self.sql, tuple(check_value(v) for v in values))

    def all(self) -> D1Result:
        return self.db._run_one(self)

    def run(self) -> D1Result:
        return self.db._run_one(self)

    def first(self, column: str | None = None) -> Any:
        return first_of(self.all().results, column)

    def raw(self, column_names: bool = False) -> list[list[Any]]:
        outcome, _ = self.db._execute(self)
        rows = _list_rows(outcome)
        return [list(outcome.columns), *rows] if column_names else rows


class D1CoreDatabase:
    """`D1Database` over an `Engine`; thread-safe within a process (one lock around each call)."""

    def __init__(self, engine: Engine, clock: Callable[[], float] = time.perf_counter, *,
                 time_limit_s: float = D1_QUERY_TIME_LIMIT_S) -> None:
        """`time_limit_s`: D1's limit on one query, a statement or a whole batch (time_limit.py)."""
        self._engine = engine
        self._clock = clock
        self._lock = threading.RLock()
        self._closed = False
        self.time_limit_s = time_limit_s
        self._limited_calls = 0  # calls inside a limited one run under its deadline

    @contextmanager
    def _limited(self) -> Iterator[None]:
        """The time limit around one call (taken with the lock held): past it, the engine stops the statement and
        the call fails with D1's time-limit error; the caller's rollback then runs without a limit."""
        if self._limited_calls:
            yield
            return
        deadline = time.monotonic() + self.time_limit_s
        self._engine.time_limit(deadline)
        self._limited_calls += 1
        try:
            yield
        except Exception as exc:
            if time.monotonic() >= deadline and not isinstance(exc, D1TimeLimit):
                raise D1TimeLimit() from exc
            raise
        finally:
            self._limited_calls -= 1
            self._engine.time_limit(None)

    def prepare(self, sql: str) -> Statement:
        return Statement(self, sql)

    def batch(self, statements: Sequence[D1PreparedStatement]) -> list[D1Result]:
        own = [self._own(s) for s in statements]
        if len(own) == 1:  # a statement alone is atomic as it is, as a lone `run` is: no BEGIN and COMMIT to pay
            return [self._run_one(own[0])]
        with self._lock:
            self._engine.begin()
            try:
                with self._limited():
                    results = [result for run in _runs(own) for result in self._run_locked(run)]
            except BaseException:
                self._engine.rollback()
                raise
            self._engine.commit()
            return results

    def run_statements(
        self, statements: Sequence[tuple[str, Sequence[D1Value]]], *, raw: bool = False
    ) -> list[D1Result] | list[RawResult]:
        """Bind and run `(sql, params)` pairs one by one in one transaction, as D1's REST `/query` (`raw=False`:
        `D1Result`s) and `/raw` (`raw=True`: `RawResult`s, column names kept even without rows) do. Any failure,
        binding included, rolls everything back and raises `D1StatementError` naming the statement's index."""
        bound = [self._bind_at(index, sql, params) for index, (sql, params) in enumerate(statements)]
        shape = self._raw_result if raw else self._result
        with self._lock:
            self._engine.begin()
            try:
                with self._limited():
                    results = [shape(*self._execute_at(index, statement)) for index, statement in enumerate(bound)]
            except BaseException:
                self._engine.rollback()
                raise
            self._engine.commit()
        return results  # type: ignore[return-value]

    def run_script(
        self, statements: Iterable[tuple[str, Sequence[D1Value]]], stop: Callable[[], bool] = lambda: False,
        *, run_length: int = 1000,
    ) -> ScriptTotals:
        """Run `(sql, params)` statements as they come (a D1 import: an iterator over a file) in one transaction,
        keeping only totals, so a file of any length takes constant memory. Consecutive statements with the same
        SQL run together (up to `run_length`; the engine may execute them as one), each run under D1's time
        limit. A failure, or `stop()` turning true, rolls everything back and raises D1StatementError naming the
        statement (for a run the engine executed as one, its first)."""
        totals = ScriptTotals()
        with self._lock:
            self._engine.begin()
            try:
                run: list[Statement] = []
                for index, (sql, params) in enumerate(statements):
                    if run and (run[0].sql != sql or len(run) >= run_length):
                        self._script_run(index - len(run), run, totals, stop)
                        run = []
                    run.append(self._bind_at(index, sql, params))
                if run:
                    self._script_run(totals.statements, run, totals, stop)
            except BaseException:
                self._engine.rollback()
                raise
            self._engine.commit()
            totals.size_after = self._engine.size()
        return totals

    def _script_run(self, first: int, run: list[Statement], totals: ScriptTotals, stop: Callable[[], bool]) -> None:
        if stop():
            raise D1StatementError(D1Error("the import was stopped (the server is shutting down)"), first)
        started = self._clock()
        with self._limited():
            check_statement(run[0].sql, run[0].values)  # one SQL text: its checks hold for all that bind as many
            for k, statement in enumerate(run):
                if len(statement.values) != len(run[0].values):
                    self._execute_at(first + k, statement)  # fails as it would alone
            try:  # one statement too: it may hold several rows
                outcomes = self._engine.execute_run(run[0].sql, [s.values for s in run]) or []
            except D1Error as exc:  # the engine may know which statement of the run fails
                raise D1StatementError(exc, first + getattr(exc, "statement", 0)) from exc
            # the engine ran the first ones as one (perhaps none): the rest one by one, where a failure names its own
            outcomes += [self._execute_at(first + k, run[k])[0] for k in range(len(outcomes), len(run))]
        totals.duration += (self._clock() - started) * 1000.0
        for outcome in outcomes:
            totals.statements += 1
            totals.rows_read += outcome.row_count
            totals.rows_written += outcome.changes
            totals.changes += outcome.changes
            totals.changed_db = totals.changed_db or outcome.changed_db
            totals.last_row_id = outcome.last_row_id

    def exec(self, sql: str) -> D1ExecResult:
        """D1 splits the input by newline and runs each line as one statement, in one transaction."""
        lines = sql.strip().split("\n")
        total = 0.0
        count = 0
        with self._lock:
            self._engine.begin()
            try:
                with self._limited():
                    for number, line in enumerate(lines, start=1):
                        if not line.strip():
                            continue
                        try:
                            _, duration = self._execute_locked(Statement(self, line))
                        except D1Error as exc:
                            raise D1ExecError(f"Error in line {number}: {line}: {exc.cause}") from exc
                        total += duration
                        count += 1
            except BaseException:
                self._engine.rollback()
                raise
            self._engine.commit()
        return D1ExecResult(count=count, duration=total)

    def backup(self, dest: str | Path) -> dict[str, int]:
        """A consistent copy of the database in the file `dest`, taken under the database's lock: no statement
        or batch runs while it is taken (each holds the lock for its whole length). Returns the rows of each
        table at that moment, for the copy to be checked against."""
        with self._lock:
            counts = self.row_counts()
            self._engine.backup(Path(dest))
            return counts

    def compact(self) -> None:
        """Removed values leave the files (the engine's `compact`), under the database's lock."""
        with self._lock:
            if self._closed:
                return
            try:
                self._engine = self._engine.compact()
            except CompactFailed as exc:
                self._engine = exc.engine
                raise

    def row_counts(self) -> dict[str, int]:
        """Rows per table, as SQLite's catalogue lists the tables (D1's own `_cf_` tables left out)."""
        with self._lock:
            outcome, _ = self._execute_locked(Statement(self, _TABLES))
            tables = sorted(str(row[0]) for row in outcome.rows)
            counts = {}
            for table in tables:
                quoted = table.replace('"', '""')
                outcome, _ = self._execute_locked(Statement(self, f'SELECT count(*) FROM "{quoted}"'))
                counts[table] = int(outcome.rows[0][0])
            return counts

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._engine.close()

    # --- internals ------------------------------------------------------------------------------------------
    def _own(self, statement: D1PreparedStatement) -> Statement:
        if not isinstance(statement, Statement) or statement.db is not self:
            raise D1Error("batch() takes statements prepared on this database")
        return statement

    def _bind_at(self, index: int, sql: str, params: Sequence[D1Value]) -> Statement:
        try:
            return Statement(self, sql).bind(*params)
        except D1Error as exc:
            raise D1StatementError(exc, index) from exc

    def _execute_at(self, index: int, statement: Statement) -> tuple[Outcome, float]:
        try:
            return self._execute_locked(statement)
        except D1Error as exc:
            raise D1StatementError(exc, index) from exc

    def _raw_result(self, outcome: Outcome, duration: float) -> RawResult:
        rows = _list_rows(outcome)  # meta as `/query` words it: rows_read counts every row
        return RawResult(list(outcome.columns), rows, self._meta(outcome, duration, None, len(rows)))

    def _run_locked(self, run: list[Statement]) -> list[D1Result]:
        """Consecutive statements with the same SQL; the engine may execute them as one."""
        if len(run) == 1:
            return [self._result(*self._execute_locked(run[0]))]
        if self._closed:
            raise D1Error("the database is closed")
        for statement in run:
            check_statement(statement.sql, statement.values)
        started = self._clock()
        outcomes = self._engine.execute_run(run[0].sql, [s.values for s in run]) or []
        share = (self._clock() - started) * 1000.0 / max(1, len(outcomes))
        size = self._engine.size()
        results = [self._result(outcome, share, size) for outcome in outcomes]
        return results + [self._result(*self._execute_locked(s)) for s in run[len(outcomes):]]

    def _run_one(self, statement: Statement) -> D1Result:
        with self._lock, self._limited():  # size_after asks the engine too: one thread at a time on a connection
            return self._result(*self._execute_locked(statement))

    def _execute(self, statement: Statement) -> tuple[Outcome, float]:
        with self._lock, self._limited():
            return self._execute_locked(statement)

    def _execute_locked(self, statement: Statement) -> tuple[Outcome, float]:
        if self._closed:
            raise D1Error("the database is closed")
        check_statement(statement.sql, statement.values)
        started = self._clock()
        outcome = self._engine.execute(statement.sql, statement.values)
        return outcome, (self._clock() - started) * 1000.0

    def _result(self, outcome: Outcome, duration: float, size: int | None = None) -> D1Result:
        rows = _dict_rows(outcome)
        return D1Result(results=rows, meta=self._meta(outcome, duration, size, len(rows)))

    def _meta(self, outcome: Outcome, duration: float, size: int | None, rows_read: int) -> D1Meta:
        return local_meta(
            duration=duration,
            changes=outcome.changes,
            last_row_id=outcome.last_row_id,
            changed_db=outcome.changed_db,
            size_after=self._engine.size() if size is None else size,
            rows_read=rows_read,
            rows_written=outcome.changes,
        )


def _runs(statements: list[Statement]) -> list[list[Statement]]:
    """Split into runs of consecutive statements with the same SQL text."""
    runs: list[list[Statement]] = []
    for statement in statements:
        if runs and runs[-1][0].sql == statement.sql:
            runs[-1].append(statement)
        else:
            runs.append([statement])
    return runs


def _list_rows(outcome: Outcome) -> list[list[Any]]:
    if outcome.plain:  # the engine's fast path: values need no shaping, more rows in `tail`
        return [list(row) for row in outcome.rows] + [list(row) for row in zip(*(outcome.tail or ()), strict=True)]
    return [[shape_value(v) for v in row] for row in outcome.rows]


def _dict_rows(outcome: Outcome) -> list[dict[str, Any]]:
    # An engine's row has one value per column. Not strict per row: the check costs ~0.4 us a row (2 cores).
    if not outcome.plain:
        return [{c: shape_value(v) for c, v in zip(outcome.columns, row, strict=False)} for row in outcome.rows]
    columns = outcome.columns
    rows = [dict(zip(columns, row, strict=False)) for row in outcome.rows]
    if outcome.tail:
        rows.extend(dict(zip(columns, row, strict=False)) for row in zip(*outcome.tail, strict=True))
    return rows
