"""Workers AI's `rejectIfBusy` run option (`env.AI.run(model, inputs, {rejectIfBusy: true})`, 2026-09-17), locally:
a run asking it while another run of the same model is under way on this server is refused at once with Workers
AI's out-of-capacity error (HTTP 429, internal code 3040, "No more data centers to forward the request to", from
its errors table) instead of waiting its turn. Without the option a run waits, as before."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from memory_sim.server.envelope import ApiError

CODE_AI_OUT_OF_CAPACITY = 3040


def out_of_capacity() -> ApiError:
    return ApiError(429, CODE_AI_OUT_OF_CAPACITY, "AiError: No more data centers to forward the request to")


class AiCapacity:
    """The runs under way per model on this server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: Counter[str] = Counter()

    @contextmanager
    def running(self, model: str, *, reject_if_busy: bool) -> Iterator[None]:
        with self._lock:
            if reject_if_busy and self._running[model]:
                raise out_of_capacity()
            self._running[model] += 1
        try:
            yield
        finally:
            with self._lock:
                self._running[model] -= 1
