"""Index work the caller does not wait for: one thread, tasks in the order given.

`MemorySystem.remember_many(..., wait=False)` writes D1 at once and hands the embedding and the upsert here, so a
simulation writes its next hours while the model runs (onnxruntime and DuckDB both let go of the GIL while they
work). Every other method of the system calls `settle()` first, so whatever it reads is what it would be had the
work been done in line. D1 already holds each memory `pending` before its task is queued: a process that dies
with tasks queued leaves them to `retry_pending`, as a failed attempt would.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Concatenate, ParamSpec, Protocol, TypeVar


class Background:
    """One worker thread, started on the first task; `settle()` waits for every task and raises the first
    failure (the others are waited for too)."""

    def __init__(self, name: str = "memory-sim-index") -> None:
        self._name = name
        self._pool: ThreadPoolExecutor | None = None
        self._queued: list[Future[None]] = []
        self._lock = threading.Lock()

    def submit(self, task: Callable[[], None]) -> None:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self._name)
            self._queued.append(self._pool.submit(task))

    def settle(self) -> None:
        """Returns once every task given so far has run; raises the first one's exception, if any."""
        if threading.current_thread().name.startswith(self._name):
            return  # a task that calls back into the system must not wait for itself
        with self._lock:
            queued, self._queued = self._queued, []
        failure: BaseException | None = None
        for future in queued:
            error = future.exception()  # waits
            failure = failure or error
        if failure is not None:
            raise failure


class Settles(Protocol):
    def settle(self) -> None: ...


S = TypeVar("S", bound=Settles)
P = ParamSpec("P")
R = TypeVar("R")


def settled(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """The method runs once the object's background work is done (`settle()`): it sees every memory remembered
    before it as if indexed in line."""

    @functools.wraps(method)
    def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        self.settle()
        return method(self, *args, **kwargs)

    return wrapper
