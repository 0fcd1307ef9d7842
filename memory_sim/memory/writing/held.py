"""Index outcomes the background thread holds back, written to D1 in one statement when the system settles.

A memory the background indexes was written `pending` before its task was queued; once its vector is in the
index, D1 must say `indexed` (with the time). Written task by task, that is one D1 statement an hour of a
simulation; held here, every task's plain outcome (nothing else to write: no outbox row, counter or failure)
goes out in one statement the next time the system settles, which every reading method does first. A process
that dies before that leaves the rows `pending` with no outbox row: `retry_pending` takes them as never
attempted and writes the same vectors again (harmless), so nothing is lost.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

from memory_sim.bindings.d1 import D1Database
from memory_sim.memory.ledger import store


class HeldOutcomes:
    """Ids indexed and the world time each was indexed at, not yet written to D1 (thread-safe)."""

    def __init__(self) -> None:
        self._at: dict[str, float] = {}
        self._lock = threading.Lock()

    def hold(self, ids: Sequence[str], now: float) -> None:
        with self._lock:
            self._at.update(dict.fromkeys(ids, now))  # indexed again later: the later time stands, as in D1

    def holds_any(self, ids: Iterable[str]) -> bool:
        with self._lock:
            return any(i in self._at for i in ids)

    def write(self, db: D1Database) -> None:
        """Every held outcome in one D1 batch (one statement per 20,000 rows); on failure they are not held any
        more (their rows stay `pending`, for `retry_pending`) and the error is raised."""
        with self._lock:
            held, self._at = self._at, {}
        if held:
            db.batch(store.set_indexed(db, held))
