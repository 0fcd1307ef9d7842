"""Workers AI's `rejectIfBusy` run option (2026-09-17): the binding's third argument (`env.AI.run(model, inputs,
{rejectIfBusy: true})`) or `options` in a REST body. Locally, a run asking it while another run of the same model
is under way on this server is refused at once as Workers AI refuses it when capacity is unavailable: HTTP 429,
internal code 3040, "Capacity temporarily exceeded, please try again." (cloudflare-docs
`src/content/docs/workers-ai/features/reject-if-busy.mdx`). Without the option a run waits its turn, as before."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from memory_sim.server.envelope import ApiError

CODE_AI_OUT_OF_CAPACITY = 3040


def out_of_capacity() -> ApiError:
    return ApiError(429, CODE_AI_OUT_OF_CAPACITY, "Capacity temporarily exceeded, please try again.")


def rejects_if_busy(options: object) -> bool:
    """Whether a run's `options` ask for `rejectIfBusy` (only `true` does)."""
    return isinstance(options, dict) and options.get("rejectIfBusy") is True


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
