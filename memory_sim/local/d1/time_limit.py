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
    first use (one thread per engine, not one per statement). Arming costs a lock; it wakes the thread only when
    the thread would otherwise sleep past the new deadline: with statements seconds apart and a 30 s limit, the
    thread sleeps until the first deadline, finds a later one armed, and sleeps on (no wake-up per statement)."""

    def __init__(self, interrupt: Callable[[], None]) -> None:
        self._interrupt = interrupt
        self._deadline: float | None = None
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._waking_at: float | None = None  # when the thread's wait ends; None: not until notified
        self._closed = False

    def arm(self, deadline: float) -> None:
        with self._wake:
            self._deadline = deadline
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="d1-time-limit", daemon=True)
                self._thread.start()
            elif self._waking_at is None or self._waking_at > deadline:
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
                    self._waking_at = None
                    self._wake.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._waking_at = self._deadline
                    self._wake.wait(left)
                    continue
                self._deadline = None
                self._interrupt()
