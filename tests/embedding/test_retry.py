"""Retrier: jittered, capped backoff with injected sleep and clock; only transient errors are retried."""

from __future__ import annotations

import random

import pytest

from memory_sim.errors import AiError, EmbeddingUnavailable
from memory_sim.retry import Backoff, Retrier, parse_retry_after, unavailable


def flaky(failures: int, error: Exception) -> tuple[list[int], object]:
    calls: list[int] = []

    def call() -> str:
        calls.append(1)
        if len(calls) <= failures:
            raise error
        return "ok"

    return calls, call


def test_retries_transient_errors_with_jittered_backoff() -> None:
    slept: list[float] = []
    calls, call = flaky(3, EmbeddingUnavailable("503"))
    retrier = Retrier(Backoff(attempts=4, base_s=1.0, cap_s=3.0), sleep=slept.append, rng=random.Random(1))
    assert retrier.call(call) == "ok"  # type: ignore[arg-type]
    assert len(calls) == 4 and len(slept) == 3
    assert all(0 <= s <= cap for s, cap in zip(slept, [1.0, 2.0, 3.0]))
    again: list[float] = []
    Retrier(Backoff(attempts=4, base_s=1.0, cap_s=3.0), sleep=again.append, rng=random.Random(1)).call(
        flaky(3, EmbeddingUnavailable("503"))[1]  # type: ignore[arg-type]
    )
    assert again == slept  # seeded jitter is reproducible


def test_gives_up_after_the_attempts() -> None:
    calls, call = flaky(10, EmbeddingUnavailable("429"))
    with pytest.raises(EmbeddingUnavailable):
        Retrier(Backoff(attempts=3), sleep=lambda s: None).call(call)  # type: ignore[arg-type]
    assert len(calls) == 3


def test_bad_input_is_not_retried() -> None:
    calls, call = flaky(1, AiError("bad input"))
    with pytest.raises(AiError):
        Retrier(sleep=lambda s: None).call(call)  # type: ignore[arg-type]
    assert len(calls) == 1


def test_deadline_stops_retrying_and_retry_after_is_capped() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    calls, call = flaky(10, unavailable("429", retry_after=5.0))
    retrier = Retrier(Backoff(attempts=10, cap_s=4.0, deadline_s=10.0), sleep=sleep, clock=lambda: now[0])
    with pytest.raises(EmbeddingUnavailable):
        retrier.call(call)  # type: ignore[arg-type]
    assert slept == [4.0, 4.0] and len(calls) == 3  # a third wait would pass the 10 s deadline


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") is None
    assert parse_retry_after(None) is None
