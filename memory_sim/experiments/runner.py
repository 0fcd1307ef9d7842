"""Runs an experiment: every run of the spec not finished yet, each in its own data folder
(`<out>/runs/<run id>/data`), one after the other or in `jobs` processes (or as Ray tasks, each in a folder on its
worker: experiments/on_ray.py); the parent alone writes the results
database, one transaction per finished run. A run cut short (killed, failed) left only its folder, which is
removed and the run started again from its first sim day. Runs are independent and seeded, and their results
carry no wall-clock value outside `measurements`, so the order they finish in changes nothing.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_sim.experiments import on_ray, store
from memory_sim.experiments.one_run import OnDay, execute
from memory_sim.experiments.probes import Timer
from memory_sim.experiments.spec import Run, Spec, Target


@dataclass
class Outcome:
    folder: Path
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # finished by an earlier invocation
    failed: dict[str, str] = field(default_factory=dict)  # on Ray: runs that failed for good, with their errors


def run_folder(out: Path, run: Run) -> Path:
    return out / "runs" / run.id


def run_experiment(
    spec: Spec, out: Path, jobs: int = 1, *, progress: bool = True, on_day: OnDay | None = None,
    timer: Timer = time.perf_counter, ray: on_ray.RayTarget | None = None,
) -> Outcome:
    """Runs what is left of `spec` into the folder `out`: in this process, in `jobs` processes, or as Ray tasks
    where `ray` says where (then `jobs` is not used). `on_day(run, day)` is called in this process after each
    recorded sim day (in this process only); `timer` measures latency and seconds (in this process only)."""
    out.mkdir(parents=True, exist_ok=True)
    with store.connect(out) as db:
        store.claim(db, spec.name, spec.text, spec.canonical())
        done = store.finished(db)
        outcome = Outcome(out, skipped=[r.id for r in spec.runs if r.id in done])
        todo = [r for r in spec.runs if r.id not in done]
        for run in todo:
            shutil.rmtree(run_folder(out, run), ignore_errors=True)  # a run cut short starts again cleanly
        bar = _bar(spec, len(outcome.skipped), progress)
        try:
            if ray is not None and todo:
                outcome.ran, outcome.failed = on_ray.run_all(db, spec.target, todo, ray, bar)
            elif jobs <= 1 or len(todo) <= 1:
                for run in todo:
                    store.save_run(db, execute(run, spec.target, run_folder(out, run), _reporter(bar, on_day), timer))
                    outcome.ran.append(run.id)
                    bar.update(1)
            else:
                _in_processes(db, spec.target, todo, out, jobs, bar, outcome)
        finally:
            bar.close()
    return outcome


def _work(run: Run, target: Target, folder: Path, days: Any) -> dict[str, list[dict[str, Any]]]:
    """A worker process's run; its sim days go to the parent's progress bar through `days` (a queue)."""
    return execute(run, target, folder, lambda r, day: days.put((r.id, day)), time.perf_counter)


def _in_processes(db: Any, target: Target, todo: list[Run], out: Path, jobs: int, bar: Any, outcome: Outcome) -> None:
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    context = multiprocessing.get_context("spawn")  # no fork of a parent holding DuckDB and threads
    with context.Manager() as manager, ProcessPoolExecutor(jobs, mp_context=context) as pool:
        days = manager.Queue()
        pending = {pool.submit(_work, run, target, run_folder(out, run), days): run for run in todo}
        try:
            while pending:
                finished, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                while not days.empty():
                    run_id, day = days.get()
                    bar.set_postfix_str(f"{run_id}: sim day {day}", refresh=True)
                for future in finished:
                    run = pending.pop(future)
                    store.save_run(db, future.result())  # a failed run raises here, after the others' rows
                    outcome.ran.append(run.id)
                    bar.update(1)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # runs not started stay undone; the next call does them
            raise


def _bar(spec: Spec, done: int, progress: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=len(spec.runs), initial=done, unit="run", desc=spec.name, disable=not progress, leave=True)


def _reporter(bar: Any, on_day: OnDay | None) -> OnDay:
    def report(run: Run, day: int) -> None:
        bar.set_postfix_str(f"{run.id}: sim day {day}", refresh=True)
        if on_day is not None:
            on_day(run, day)

    return report
