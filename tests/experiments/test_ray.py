"""`experiment run --ray`: each run a Ray task on a local Ray of 2 CPUs, driven through the CLI inside a network
namespace with only loopback (`unshare -n`), so Ray can reach nothing beyond this machine. The same spec gives the
same result rows as in one process and with `--jobs 2`; a worker killed mid-run has its run retried and recorded
once; a run that fails for good is recorded with its error and the others finish; Ctrl-C leaves the store
consistent; a second invocation skips finished runs. Bounded: every CLI call has a deadline."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from experiment_helpers import TINY, tables

from memory_sim.experiments import store
from memory_sim.experiments.runner import run_experiment
from memory_sim.experiments.spec import load_spec

pytest.importorskip("ray", reason="Ray is in the test extra; without it only the install hint is tested")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]

CLI = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())"]
DEADLINE_S = 240  # one CLI call: Ray's start, 4-6 tiny runs and its stop, on a loaded 2-core machine
SLOWER = TINY.replace("days = 3", "days = 5")  # runs long enough to be killed or interrupted mid-way


def isolated(args: list[str]) -> list[str]:
    """`args` in a new network namespace whose only interface is loopback (brought up first)."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1) to keep Ray inside a loopback-only network namespace")
    script = 'ip link set lo up 2>/dev/null || true; exec "$@"'
    return ["unshare", "-n", "sh", "-c", script, "sh", *args]


def on_ray(spec: Path, out: Path, *extra: str) -> list[str]:
    return isolated([*CLI, "experiment", "run", str(spec), "--out", str(out), "--ray", "--ray-cpus", "2",
                     "--quiet", *extra])


def _net_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


class RayTasks:
    """Ray's worker processes while they run a run (Ray titles them `ray::<function>`) of one experiment: those in
    its driver's network namespace (each test's own, `isolated`), so a Ray test running beside it on another
    pytest worker is neither seen nor signalled."""

    def __init__(self, driver: subprocess.Popen[str]) -> None:
        self.driver, self.namespace = driver, None

    def __call__(self) -> list[psutil.Process]:
        if self.namespace is None:  # known once the driver has left this namespace (unshare), kept after it exits
            seen = _net_namespace(self.driver.pid)
            self.namespace = seen if seen not in (None, _net_namespace(os.getpid())) else None
        if self.namespace is None:
            return []
        found = []
        for process in psutil.process_iter(["cmdline"]):
            cmdline = process.info.get("cmdline") or []
            if cmdline and cmdline[0].startswith("ray::run_task") and _net_namespace(process.pid) == self.namespace:
                found.append(process)
        return found


@pytest.fixture(scope="module")
def reference(fast_module_tmp: Path) -> dict[str, list[tuple[Any, ...]]]:
    (fast_module_tmp / "slower.toml").write_text(SLOWER)
    run_experiment(load_spec(fast_module_tmp / "slower.toml"), fast_module_tmp / "ref", progress=False)
    return tables(fast_module_tmp / "ref")


@pytest.fixture
def slower_spec(fast_tmp: Path) -> Path:
    path = fast_tmp / "slower.toml"
    path.write_text(SLOWER)
    return path


def test_ray_gives_the_rows_of_one_process_and_of_two_jobs(
    slower_spec: Path, fast_tmp: Path, reference: dict[str, list[tuple[Any, ...]]]
) -> None:
    done = subprocess.run(on_ray(slower_spec, fast_tmp / "ray"), capture_output=True, text=True,
                          timeout=DEADLINE_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "4 runs done, 0 finished before" in done.stdout
    run_experiment(load_spec(slower_spec), fast_tmp / "jobs2", jobs=2, progress=False)
    assert tables(fast_tmp / "ray") == reference == tables(fast_tmp / "jobs2")
    assert not (fast_tmp / "ray" / "runs").exists()  # each run's data folder lived on its worker
    again = subprocess.run(on_ray(slower_spec, fast_tmp / "ray"), capture_output=True, text=True,
                           timeout=DEADLINE_S)
    assert again.returncode == 0 and "0 runs done, 4 finished before" in again.stdout, again.stderr[-2000:]


def test_a_worker_killed_mid_run_is_retried_and_recorded_once(
    slower_spec: Path, fast_tmp: Path, reference: dict[str, list[tuple[Any, ...]]]
) -> None:
    out = fast_tmp / "killed"
    process = subprocess.Popen(on_ray(slower_spec, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ray_task_processes = RayTasks(process)
    killed = None
    deadline = time.monotonic() + DEADLINE_S
    while killed is None and process.poll() is None and time.monotonic() < deadline:
        for worker in ray_task_processes():
            worker.send_signal(signal.SIGKILL)
            killed = worker.pid
            break
        time.sleep(0.02)
    stdout, stderr = process.communicate(timeout=DEADLINE_S)
    assert killed is not None, "no Ray task was seen running: nothing was killed"
    assert process.returncode == 0, stderr[-2000:]
    assert "4 runs done" in stdout
    with store.connect(out, read_only=True) as db:
        assert store.failures(db) == {}
    assert tables(out) == reference  # the killed run ran again from its first day, its rows once


def test_a_run_that_fails_for_good_is_recorded_and_the_others_finish(fast_tmp: Path) -> None:
    not_a_model = fast_tmp / "not-a-model"
    not_a_model.mkdir()
    spec = fast_tmp / "mixed.toml"
    spec.write_text(TINY.replace("seeds = [1, 2]", "seeds = [1]").replace(
        "[grid]\ndecay_rate = [0.05, 0.6]", f'[grid]\nmodel = ["fake/hashing", "{not_a_model}"]'))
    out = fast_tmp / "mixed"
    done = subprocess.run(on_ray(spec, out), capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "1 runs done, 0 finished before, 1 failed" in done.stdout
    bad = [r for r in load_spec(spec).runs if str(not_a_model) in r.variant]
    assert len(bad) == 1 and f"memory-sim: run {bad[0].id} failed: " in done.stderr
    with store.connect(out, read_only=True) as db:
        assert set(store.failures(db)) == {bad[0].id}
        assert store.finished(db) == {r.id for r in load_spec(spec).runs} - {bad[0].id}
    again = subprocess.run(on_ray(spec, out), capture_output=True, text=True, timeout=DEADLINE_S)
    assert again.returncode == 1 and "0 runs done, 1 finished before, 1 failed" in again.stdout


def as_from_a_terminal() -> None:
    """In the driver's process before it starts: SIGINT delivered and acted on, as a shell started from a terminal
    has it. A child inherits an ignored or blocked SIGINT through exec, and the pytest worker's may be either
    (left so by a library an earlier test used): the driver then never saw the SIGINT and ran to its end."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupted(spec: Path, out: Path) -> tuple[subprocess.Popen[str], RayTasks, str, str]:
    """The experiment on Ray, sent SIGINT once one of its runs is running; the driver, its tasks, its output."""
    process = subprocess.Popen(on_ray(spec, out, "--ray-cpus", "1"), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, preexec_fn=as_from_a_terminal)
    ray_task_processes = RayTasks(process)
    deadline = time.monotonic() + DEADLINE_S
    while not ray_task_processes() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert process.poll() is None, "the experiment ended before it could be interrupted"
    # SIGINT to the driver alone: a terminal's Ctrl-C reaches the whole group, but here sh exec'd the driver
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=DEADLINE_S)
    return process, ray_task_processes, stdout, stderr


def test_ctrl_c_cancels_what_is_pending_and_leaves_the_store_consistent(
    slower_spec: Path, fast_tmp: Path, reference: dict[str, list[tuple[Any, ...]]]
) -> None:
    out = fast_tmp / "interrupted"
    process, ray_task_processes, stdout, stderr = interrupted(slower_spec, out)
    assert process.returncode != 0, (stdout[-1000:], stderr[-3000:])
    deadline = time.monotonic() + 30
    while ray_task_processes() and time.monotonic() < deadline:  # Ray's shutdown stops its workers
        time.sleep(0.1)
    assert not ray_task_processes(), "a Ray task outlived the interrupted experiment"
    with store.connect(out, read_only=True) as db:
        finished = store.finished(db)
        assert len(finished) < 4 and store.failures(db) == {}
        for table in ("daily_metrics", "question_results"):  # a recorded run is whole, an unrecorded one absent
            assert {row[0] for row in store.table_rows(db, table)} == finished
    done = subprocess.run(on_ray(slower_spec, out), capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{4 - len(finished)} runs done, {len(finished)} finished before" in done.stdout
    assert tables(out) == reference
