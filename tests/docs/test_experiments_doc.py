"""docs/experiments.md: its spec, commands and query run as written (the hashing model in place of MiniLM, so
the test takes seconds), and it documents every knob and every column of the results database."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_sim.cli import main
from memory_sim.experiments import store
from memory_sim.experiments.spec import KNOBS, load_spec

DOC = Path(__file__).resolve().parents[2] / "docs" / "experiments.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text("utf-8"), re.S)


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    """On tmpfs where the machine has one: the runs' fsyncs on a loaded disk would take most of the time."""
    if not Path("/dev/shm").is_dir():
        yield tmp_path
        return
    fast = Path(tempfile.mkdtemp(prefix="memory_sim_doc_", dir="/dev/shm"))
    try:
        yield fast
    finally:
        shutil.rmtree(fast, ignore_errors=True)


def test_the_first_experiment_runs_as_written(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tmp_path = folder
    (toml,) = blocks("toml")
    assert 'model = "sentence-transformers/all-MiniLM-L6-v2"' in toml
    (tmp_path / "first.toml").write_text(toml.replace("sentence-transformers/all-MiniLM-L6-v2", "fake/hashing"))
    assert len(load_spec(tmp_path / "first.toml").runs) == 4
    monkeypatch.chdir(tmp_path)
    (console,) = blocks("console")
    for line in console.strip().splitlines():
        argv = line.removeprefix("$ memory-sim ").split()
        if "--jobs" in argv:  # one process: the doc's --jobs 2 is tested in tests/experiments
            argv = argv[: argv.index("--jobs")]
        assert main([*argv, "--quiet"] if argv[1] == "run" else argv) == 0, line
    assert (tmp_path / "results/first/report/report.md").is_file()
    assert (tmp_path / "results/first/report/vs_decay_rate.png").is_file()
    assert (tmp_path / "results/first/export/daily_metrics.csv").is_file()
    (python,) = blocks("python")
    done = subprocess.run([sys.executable, "-c", python], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "weighted_p5" in done.stdout and "0.3" in done.stdout


def test_every_knob_and_column_is_documented() -> None:
    text = DOC.read_text("utf-8")
    for knob in KNOBS:
        assert f"`{knob}`" in text, f"docs/experiments.md does not list the knob {knob}"
    for table, columns in store.columns().items():
        assert f"`{table}`" in text
        for name, _ in columns:
            assert f"`{name}`" in text or name in KNOBS, f"docs/experiments.md does not document {table}.{name}"
