"""Runs an experiment's runs as Ray tasks, one task a run, on a local Ray (the default) or a cluster.

What moves: each task takes its `Run` and the spec's `Target` (and, for LoCoMo, the dataset's bytes, put in Ray's
object store once), works in a temporary data folder on its worker, and returns its result rows; the folder is
removed when the task ends. What stays: this process alone writes the results database, one transaction per
finished run, as `--jobs` does, so the same spec gives the same rows on either.

Faults: a task whose worker dies (killed, out of memory, its node lost) is run again by Ray, at most `retries`
times, and recorded once; a run that raises, or dies more often, is recorded in `failed_runs` with its error
while the others go on; Ctrl-C cancels the tasks not finished and leaves every finished run recorded.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_sim.errors import ConfigError
from memory_sim.experiments import store
from memory_sim.experiments.one_run import execute
from memory_sim.experiments.spec import Run, Target

INSTALL_HINT = "Ray is not installed: pip install 'memory-sim[ray]'"
LOCAL = "local"  # `--ray` with no address: a Ray started here, on loopback, and stopped at the end
DEFAULT_RETRIES = 2  # a run whose worker died is run again at most this often
WAIT_S = 0.5  # how long one wait for a finished task lasts, so Ctrl-C is seen promptly


@dataclass(frozen=True, slots=True)
class RayTarget:
    """Where the runs go: `address` None or "local" starts a local Ray of `cpus` CPUs (all of them when None);
    "auto" joins the cluster this machine is part of (`ray start`); "ray://host:port" a remote cluster."""

    address: str | None = None
    cpus: int | None = None
    retries: int = DEFAULT_RETRIES

    @property
    def local(self) -> bool:
        return self.address in (None, LOCAL)


def import_ray() -> Any:
    """The `ray` module, or a one-line error that says how to install it."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # Ray's usage reporting off, before Ray reads it
    try:
        import ray
    except ModuleNotFoundError as exc:
        if exc.name != "ray":
            raise
        raise ConfigError(INSTALL_HINT) from None
    return ray


@contextmanager
def connected(where: RayTarget) -> Iterator[Any]:
    """Ray, started (local) or joined (an address) for the block, and let go of after it."""
    ray = import_ray()
    quiet = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if where.local:
        # `_node_ip_address` is one of ray.init's documented keyword arguments: the local Ray listens on loopback.
        ray.init(num_cpus=where.cpus, _node_ip_address="127.0.0.1", **quiet)
    else:
        try:
            ray.init(address=where.address, **quiet)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise ConfigError(f"cannot join the Ray cluster at {where.address!r}: {exc}") from exc
    try:
        yield ray
    finally:
        ray.shutdown()


def run_task(run: Run, target: Target, dataset: bytes | None) -> dict[str, list[dict[str, Any]]]:
    """One run on a Ray worker, in a data folder of its own that is removed afterwards; returns its rows."""
    folder = Path(tempfile.mkdtemp(prefix=f"memory-sim-{run.id}-"))
    try:
        copy = None
        if dataset is not None:  # LoCoMo: the driver's file, as bytes, so no worker needs the driver's paths
            copy = folder / "dataset.json"
            copy.write_bytes(dataset)
        return execute(run, target, folder / "run", lambda r, day: None, time.perf_counter, dataset=copy)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_all(db: Any, target: Target, todo: list[Run], where: RayTarget, bar: Any) -> tuple[list[str], dict[str, str]]:
    """Every run of `todo` as a Ray task; returns the ids of the runs recorded, in the order they finished, and
    the runs that failed for good with their errors (also recorded in `failed_runs`)."""
    ran: list[str] = []
    failed: dict[str, str] = {}
    with connected(where) as ray:
        task = ray.remote(num_cpus=1, max_retries=where.retries, retry_exceptions=False)(run_task)
        dataset = None
        if target.kind == "locomo" and target.dataset is not None:
            dataset = ray.put(_read(target.dataset))
        pending = {task.remote(run, target, dataset): run for run in todo}
        try:
            while pending:
                finished, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_S)
                for ref in finished:
                    run = pending.pop(ref)
                    try:
                        rows = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        failed[run.id] = _reason(exc)
                        store.save_failure(db, run.id, failed[run.id])
                    else:
                        store.save_run(db, rows)
                        ran.append(run.id)
                    bar.set_postfix_str(f"{run.id}: {'failed' if run.id in failed else 'done'}", refresh=False)
                    bar.update(1)
        except BaseException:
            for ref in pending:  # tasks not finished: cancelled; the next invocation runs them
                ray.cancel(ref, force=True)
            raise
    return ran, failed


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the LoCoMo dataset {path}: {exc}") from exc


def _reason(exc: BaseException) -> str:
    """The error a failed task ends with, in one line: the run's own exception where it raised one."""
    cause = getattr(exc, "cause", None)
    shown = cause if isinstance(cause, BaseException) else exc
    text = f"{type(shown).__name__}: {shown}".strip()
    return " ".join(text.split())[:2000]
