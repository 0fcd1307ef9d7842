"""The same spec gives the same result rows, run twice and run in two processes; a run cut short (a failure, a
SIGKILL) leaves no rows and starts again cleanly; finished runs are skipped."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from experiment_helpers import TINY, tables

from memory_sim.experiments import store
from memory_sim.experiments.runner import run_experiment, run_folder
from memory_sim.experiments.spec import Run, load_spec

CLI = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())"]


@pytest.fixture(scope="module")
def reference(fast_module_tmp: Path) -> dict[str, list[tuple[Any, ...]]]:
    (fast_module_tmp / "tiny.toml").write_text(TINY)
    run_experiment(load_spec(fast_module_tmp / "tiny.toml"), fast_module_tmp / "out", progress=False)
    return tables(fast_module_tmp / "out")


def test_the_reference_holds_every_run_and_day(reference: dict[str, list[tuple[Any, ...]]]) -> None:
    assert len(reference["runs"]) == 4 and len(reference["daily_metrics"]) == 4 * 3
    assert len({row[2:] for row in reference["daily_metrics"]}) > 3  # the runs differ: a mix-up would show
    assert reference["question_results"]


def test_running_again_and_with_two_jobs_gives_identical_rows(
    tiny_spec: Path, fast_tmp: Path, reference: dict[str, list[tuple[Any, ...]]]
) -> None:
    spec = load_spec(tiny_spec)
    run_experiment(spec, fast_tmp / "again", progress=False)
    run_experiment(spec, fast_tmp / "jobs2", jobs=2, progress=False)
    assert tables(fast_tmp / "again") == reference
    assert tables(fast_tmp / "jobs2") == reference


def test_a_failed_run_leaves_no_rows_and_starts_again_cleanly(
    tiny_spec: Path, fast_tmp: Path, reference: dict[str, list[tuple[Any, ...]]]
) -> None:
    spec, out = load_spec(tiny_spec), fast_tmp / "out"

    def fail(run: Run, day: int) -> None:
        if run.position == 1 and day == 1:
            raise RuntimeError("injected: the run dies on its second day")

    with pytest.raises(RuntimeError, match="injected"):
        run_experiment(spec, out, progress=False, on_day=fail)
    with store.connect(out, read_only=True) as db:
        assert store.finished(db) == {spec.runs[0].id}
        assert {r[0] for r in store.table_rows(db, "daily_metrics")} == {spec.runs[0].id}
    assert (run_folder(out, spec.runs[1]) / "data").is_dir()  # what the dead run left
    days: list[tuple[str, int]] = []
    outcome = run_experiment(spec, out, progress=False, on_day=lambda run, day: days.append((run.id, day)))
    assert outcome.skipped == [spec.runs[0].id] and outcome.ran == [r.id for r in spec.runs[1:]]
    assert days[:3] == [(spec.runs[1].id, 0), (spec.runs[1].id, 1), (spec.runs[1].id, 2)]  # from its first day
    assert tables(out) == reference


def test_a_killed_experiment_resumes_to_the_same_rows(
    tiny_spec: Path, fast_tmp: Path, reference: dict[str, list[tuple[Any, ...]]]
) -> None:
    spec, out = load_spec(tiny_spec), fast_tmp / "out"
    second = run_folder(out, spec.runs[1]) / "data" / "d1"
    process = subprocess.Popen([*CLI, "experiment", "run", str(tiny_spec), "--out", str(out), "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not second.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    assert process.returncode == -signal.SIGKILL, "the experiment ended before it could be killed"
    with store.connect(out, read_only=True) as db:
        cut_short = len(store.finished(db))
    assert cut_short < len(spec.runs)
    outcome = run_experiment(spec, out, progress=False)
    assert len(outcome.skipped) == cut_short and len(outcome.ran) == len(spec.runs) - cut_short
    assert tables(out) == reference


def test_another_spec_is_refused_in_a_used_folder(fast_tmp: Path) -> None:
    from memory_sim.errors import ConfigError

    one = fast_tmp / "one.toml"
    one.write_text(TINY.replace("seeds = [1, 2]", "seeds = [1]").replace("days = 3", "days = 1"))
    first = run_experiment(load_spec(one), fast_tmp / "out", progress=False)
    other = fast_tmp / "other.toml"
    other.write_text(one.read_text().replace("npcs = 3", "npcs = 2"))
    with pytest.raises(ConfigError, match="holds the results of another spec"):
        run_experiment(load_spec(other), fast_tmp / "out", progress=False)
    again = run_experiment(load_spec(one), fast_tmp / "out", progress=False)
    assert again.ran == [] and again.skipped == first.ran and len(first.ran) == 2
