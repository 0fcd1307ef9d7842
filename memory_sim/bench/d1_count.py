"""Counting what a workload asks of D1: statements and round trips, through the binding itself.

    counted = CountingD1(env.DB); env.DB = counted   # everything above the binding now goes through it
    ...
    counted.statements, counted.round_trips, counted.busy_seconds

A round trip is one call that reaches the database: `run`, `all`, `first`, `raw`, one `batch` (however many
statements it carries) or one `exec`. On Cloudflare each is one HTTP request; locally each is one transaction.
`busy_seconds` is the wall time during which at least one of those calls was in progress, from any thread:
overlapping calls (the background indexer's and the main thread's) count once, not once per thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from memory_sim.bindings.d1 import D1Database, D1ExecResult, D1PreparedStatement, D1Result, D1Value


@dataclass(frozen=True, slots=True)
class _Counted:
    """A prepared statement of the wrapped database, counted when it runs on its own."""

    owner: CountingD1
    inner: D1PreparedStatement

    def bind(self, *values: D1Value) -> _Counted:
        return _Counted(self.owner, self.inner.bind(*values))

    def first(self, column: str | None = None) -> Any:
        with self.owner.call(1):
            return self.inner.first(column)

    def all(self) -> D1Result:
        with self.owner.call(1):
            return self.inner.all()

    def run(self) -> D1Result:
        with self.owner.call(1):
            return self.inner.run()

    def raw(self, column_names: bool = False) -> list[list[Any]]:
        with self.owner.call(1):
            return self.inner.raw(column_names)


class CountingD1:
    """A `D1Database` that counts the statements and round trips passing through it to `inner` (from any
    thread: the memory system's background indexing writes D1 too)."""

    def __init__(self, inner: D1Database) -> None:
        self.inner = inner
        self.statements = 0
        self.round_trips = 0
        self.busy_seconds = 0.0
        self._in_flight = 0
        self._busy_since = 0.0
        self._lock = threading.Lock()

    @contextmanager
    def call(self, statements: int) -> Iterator[None]:
        """One round trip carrying `statements`, counted, and timed while no other call is (a failed one too)."""
        with self._lock:
            self.statements += statements
            self.round_trips += 1
            if self._in_flight == 0:
                self._busy_since = time.perf_counter()
            self._in_flight += 1
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1
                if self._in_flight == 0:
                    self.busy_seconds += time.perf_counter() - self._busy_since

    def prepare(self, sql: str) -> D1PreparedStatement:
        return _Counted(self, self.inner.prepare(sql))

    def batch(self, statements: Sequence[D1PreparedStatement]) -> list[D1Result]:
        inner = [s.inner if isinstance(s, _Counted) else s for s in statements]
        with self.call(len(statements)):
            return self.inner.batch(inner)

    def exec(self, sql: str) -> D1ExecResult:
        with self.call(sum(1 for line in sql.strip().split("\n") if line.strip())):
            return self.inner.exec(sql)

    def __getattr__(self, name: str) -> Any:  # the engine's extras (close, backup, dump) pass through uncounted
        return getattr(self.inner, name)
