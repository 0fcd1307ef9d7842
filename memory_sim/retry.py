"""Retries with capped exponential backoff and full jitter, for the remote embedding adapters.

Time and randomness are injected (`sleep`, `clock`, a seeded `random.Random`), so tests never wait. Only
`EmbeddingUnavailable` is retried: an `AiError` means the input is wrong and a retry would fail the same way.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from memory_sim.errors import EmbeddingUnavailable

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """`attempts` calls in all; the n-th wait is uniform in [0, min(cap, base * 2**n)] ("full jitter")."""

    attempts: int = 4
    base_s: float = 0.5
    cap_s: float = 8.0
    deadline_s: float | None = 30.0  # no new attempt starts after this much time since the first

    def delay(self, retry: int, rng: random.Random) -> float:
        return rng.uniform(0.0, min(self.cap_s, self.base_s * (2**retry)))


@dataclass
class Retrier:
    """Runs a call under a `Backoff`; `retry_after` on the raised error (seconds) overrides the jitter."""

    policy: Backoff = Backoff()
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    rng: random.Random | None = None

    def __post_init__(self) -> None:
        if self.rng is None:
            self.rng = random.Random(0)

    def call(self, fn: Callable[[], T]) -> T:
        assert self.rng is not None
        started = self.clock()
        for retry in range(self.policy.attempts):
            try:
                return fn()
            except EmbeddingUnavailable as exc:
                if retry + 1 >= self.policy.attempts:
                    raise
                wait = _retry_after(exc)
                wait = self.policy.delay(retry, self.rng) if wait is None else min(wait, self.policy.cap_s)
                deadline = self.policy.deadline_s
                if deadline is not None and self.clock() - started + wait > deadline:
                    raise
                self.sleep(wait)
        raise AssertionError("unreachable: the loop returns or raises")


def _retry_after(exc: BaseException) -> float | None:
    value = getattr(exc, "retry_after", None)
    return float(value) if isinstance(value, (int, float)) and value >= 0 else None


def unavailable(message: str, retry_after: float | None = None) -> EmbeddingUnavailable:
    """An `EmbeddingUnavailable` carrying the server's Retry-After hint, if any."""
    exc = EmbeddingUnavailable(message)
    exc.retry_after = retry_after  # type: ignore[attr-defined]
    return exc


def parse_retry_after(header: str | None) -> float | None:
    """Seconds from a Retry-After header (the delta-seconds form; HTTP dates are ignored)."""
    if header is None:
        return None
    try:
        return max(0.0, float(header))
    except ValueError:
        return None
