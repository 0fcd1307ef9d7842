"""Driving the memory jobs: on the sim clock during simulations and tests, on the wall clock with APScheduler
in a long-running service (`memory-sim run`). Both call the same job functions through `run_if_due`, which
records the last period each job ran for in D1 and skips a period already done: a restarted service (or a
second scheduler) never runs a job twice for the same period.

Schedule (world time): consolidate every 6 hours (idle while every diary old enough is condensed), decay and
prune daily, retry pending embeddings hourly (each retry itself waits for its backoff), and compact hourly once
something was forgotten or corrected. A tick's runs are recorded in one statement.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC
from typing import TYPE_CHECKING, Any, TypeVar

from memory_sim.memory.ledger import store
from memory_sim.memory.models import JobReport

if TYPE_CHECKING:
    from concurrent.futures import Future

    from memory_sim.memory.system import MemorySystem

log = logging.getLogger(__name__)
HOUR_S = 3600.0
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class JobSpec:
    name: str
    every_s: float  # world seconds
    run: Callable[[float], JobReport]
    idle: Callable[[], bool] | None = None  # True: nothing to do this period (then it is neither run nor recorded)


def memory_jobs(system: MemorySystem, *, behind: bool = False) -> list[JobSpec]:
    """The four jobs. `behind`: consolidation leaves its summaries' embedding to the system's background thread
    (`consolidate(wait=False)`), for a simulation that lives its next hours meanwhile."""

    def consolidate(now: float) -> JobReport:
        return system.consolidate(now, wait=not behind)

    return [
        JobSpec("retry_pending", HOUR_S, system.retry_pending, system.nothing_to_retry),
        JobSpec("decay_and_prune", 24 * HOUR_S, system.decay_and_prune),
        JobSpec("consolidate", 6 * HOUR_S, consolidate, system.nothing_to_consolidate),
        JobSpec("compact", HOUR_S, system.compact, system.erasure_done),  # erased text leaves the files
    ]


def period_of(now: float, every_s: float) -> int:
    return int(now // every_s)


def run_if_due(system: MemorySystem, job: JobSpec, now: float) -> JobReport | None:
    """Runs `job` unless D1 says it already ran for this period. A crash between the run and the record
    only means one harmless re-run: every job is idempotent."""
    period = period_of(now, job.every_s)
    if job.idle is not None and job.idle():
        return None
    last = store.last_period(system.env.DB, job.name)
    if last is not None and last >= period:
        return None
    report = job.run(now)
    store.record_run(system.env.DB, job.name, period, now)
    return report


class SimScheduler:
    """Call `tick(now)` each sim hour; runs the jobs whose period has come, in a fixed order. It reads D1's
    job_runs once and then keeps its own record beside the one it writes: it is the one driver of its world, so
    an hour with nothing due costs no D1 statement. By default consolidation leaves its summaries' embedding to
    the system's background thread (`memory_jobs(behind=True)`): the world lives its next hours meanwhile, and
    every read through the system waits for that work first."""

    def __init__(self, system: MemorySystem, jobs: list[JobSpec] | None = None) -> None:
        self.system = system
        self.jobs = jobs if jobs is not None else memory_jobs(system, behind=True)
        self._last: dict[str, int] | None = None  # job -> the last period done, as D1 says and as this one ran

    def tick(self, now: float) -> list[JobReport]:
        if self._last is None:
            self._last = store.last_periods(self.system.env.DB)
        reports: list[JobReport] = []
        ran: list[tuple[str, int]] = []
        try:
            for job in self.jobs:
                period = period_of(now, job.every_s)
                if self._last.get(job.name, period - 1) >= period or (job.idle is not None and job.idle()):
                    continue
                reports.append(job.run(now))
                ran.append((job.name, period))
                self._last[job.name] = period
        finally:  # the tick's runs in one statement, those before a failing job too
            if ran:
                store.record_runs(self.system.env.DB, list(dict(ran).items()), now)
        return reports


class WorldClock:
    """World seconds on the wall clock: `origin` world seconds at wall time `started`, `scale` world seconds
    per real second (1.0: the world runs in real time)."""

    def __init__(self, origin: float, scale: float = 1.0, wall: Callable[[], float] = time.time) -> None:
        self.origin, self.scale, self.wall = origin, scale, wall
        self.started = wall()

    def __call__(self) -> float:
        return self.origin + (self.wall() - self.started) * self.scale


def build_service(system: MemorySystem, scale: float = 1.0, lock: threading.Lock | None = None) -> Any:
    """An APScheduler 3 BackgroundScheduler running the memory jobs on the wall clock.

    One worker thread, `max_instances=1` and `coalesce=True`: jobs never overlap and missed runs collapse into
    one. D1's job_runs table makes a restarted service skip periods already done.
    """
    from apscheduler.executors.pool import ThreadPoolExecutor
    from apscheduler.schedulers.background import BackgroundScheduler

    quiet = logging.getLogger("apscheduler")
    if quiet.level == logging.NOTSET:  # its INFO is a line per job run, every second at speed; a level set stays
        quiet.setLevel(logging.WARNING)
    scheduler = BackgroundScheduler(executors={"default": ThreadPoolExecutor(max_workers=1)})
    guard = lock or threading.Lock()
    for job in memory_jobs(system):
        scheduler.add_job(
            _guarded,
            "interval",
            seconds=max(1.0, job.every_s / scale),
            args=(system, job, guard),
            id=job.name,
            name=job.name,  # what APScheduler's own messages call it (else the function's name)
            max_instances=1,
            coalesce=True,
            misfire_grace_time=None,
            next_run_time=None,  # set at start: run each job once at once (skipped if its period is done)
        )
    return scheduler


def _guarded(system: MemorySystem, job: JobSpec, guard: threading.Lock) -> None:
    with guard:
        report = run_if_due(system, job, system.clock())
    if report is None:
        return
    log.debug("%s: %s", job.name, report)
    if job.name == "decay_and_prune":  # once a world day: one line says how the memory stands
        log.info(day_summary(system))


def day_counts(system: MemorySystem) -> dict[str, int]:
    """The world's day and hour, and the folder's counts as `memory-sim stats` has them (memory/ledger/counts.py)."""
    from memory_sim.memory.ledger.counts import memory_counts
    from memory_sim.memory.models import WorldTime

    when = WorldTime.from_seconds(system.clock())
    return {"day": when.day, "hour": when.hour, **memory_counts(system.env.DB)}


def day_summary(system: MemorySystem) -> str:
    """One line: the world's day and hour, memories remembered (forgotten ones apart), how many are indexed, and
    how many wait for it."""
    counts = day_counts(system)
    forgotten = f" ({counts['forgotten']} forgotten)" if counts["forgotten"] else ""
    return (f"day {counts['day']} hour {counts['hour']}: {counts['memories']} memories{forgotten}, "
            f"{counts['indexed']} indexed, {counts['pending']} pending")


def start_service(system: MemorySystem, scale: float = 1.0) -> Any:
    from datetime import datetime

    scheduler = build_service(system, scale)
    scheduler.start()
    for job in scheduler.get_jobs():
        job.modify(next_run_time=datetime.now(UTC))
    return scheduler


def run_soon(scheduler: Any, work: Callable[[], T]) -> Future[T]:
    """Queues `work()` on a running service's one worker: it runs between two jobs, never during one, so no job's
    write is in flight meanwhile (`backup.backup_soon`). The future gives its result."""
    from concurrent.futures import Future

    done: Future[T] = Future()

    def run() -> None:
        if done.set_running_or_notify_cancel():
            try:
                done.set_result(work())
            except BaseException as exc:  # handed to whoever waits on the future
                done.set_exception(exc)

    scheduler.add_job(run, misfire_grace_time=None)  # no trigger: once, as soon as the worker is free
    return done


@contextmanager
def stop_on_signals(signals: tuple[int, ...] = (signal.SIGTERM, signal.SIGINT)) -> Iterator[threading.Event]:
    """An event the first SIGTERM or SIGINT sets, so a service finishes its job and saves its state instead of
    dying mid-way. The first signal puts the earlier handlers back: a second one acts as it did before (Ctrl-C
    twice interrupts). Off the main thread, where Python cannot take signals, the event is never set."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous: dict[int, Any] = {}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)

    def handle(signum: int, frame: object) -> None:
        stop.set()
        restore()

    for sig in signals:
        previous[sig] = signal.signal(sig, handle)
    try:
        yield stop
    finally:
        restore()
