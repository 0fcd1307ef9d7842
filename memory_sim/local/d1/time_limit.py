"""D1's time limit on a query: 30 s, for one statement or a whole batch, after which D1 stops it and answers
`D1 DB storage operation exceeded timeout which caused object to be reset.` (REST code 7429; the wording users
quote from production, with the binding's `D1_ERROR: ` prefix). Both engines stop a statement in the middle:
sqlite3 through its progress handler (sqlite_engine.py), DuckDB through `interrupt()` called by a `Watchdog`
thread at the deadline. The limit is a constructor argument, so tests use a short one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from memory_sim.errors import D1TimeLimit

__all__ = ["D1_QUERY_TIME_LIMIT_S", "D1TimeLimit", "Watchdog"]
D1_QUERY_TIME_LIMIT_S = 30.0


class Watchdog:
    """Calls `interrupt` once `time.monotonic()` passes the armed deadline, from one daemon thread started on
    first use (one thread per engine, not one per statement: arming costs a lock and, at most, a notify)."""

    def __init__(self, interrupt: Callable[[], None]) -> None:
        self._interrupt = interrupt
        self._deadline: float | None = None
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def arm(self, deadline: float) -> None:
        with self._wake:
            self._deadline = deadline
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="d1-time-limit", daemon=True)
                self._thread.start()
            self._wake.notify()

    def disarm(self) -> None:
        with self._wake:  # once this returns no interrupt is on its way: the thread interrupts under this lock
            self._deadline = None

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._deadline = None
            self._wake.notify()

    def _watch(self) -> None:
        with self._wake:
            while not self._closed:
                if self._deadline is None:
                    self._wake.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._wake.wait(left)
                    continue
                self._deadline = None
                self._interrupt()
