"""Erasure reaching the disk: an Env that can compact its files (`Env.compact`) is told when text was erased, and
compacts when asked. Any other `WorkerEnv` (a test's, a Worker's) has nothing to compact: these are no-ops there."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Compactable(Protocol):
    erasure_pending: bool

    def compact(self) -> None: ...


def note(env: object) -> None:
    """Text was erased: the next `compact` (the `compact` job, `memory-sim compact`, or closing the Env) removes it."""
    if isinstance(env, Compactable):
        env.erasure_pending = True


def pending(env: object) -> bool:
    return isinstance(env, Compactable) and env.erasure_pending


def compact(env: object) -> None:
    if isinstance(env, Compactable):
        env.compact()
