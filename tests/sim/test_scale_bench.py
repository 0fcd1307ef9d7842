"""`memory-sim bench --scale` with tiny parameters: a run folder that goes on after a kill and ends where an
uninterrupted run ends (real DuckDB and Chroma, the hashing embedder so no model loads)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from memory_sim.cli import main

CLI = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())"]
TINY = ["--model", "fake/hashing", "bench", "--scale", "--npcs", "10"]


def memory_ids(run: Path) -> list[str]:
    import duckdb

    with duckdb.connect(str(run / "data" / "d1" / "memory.duckdb"), read_only=True) as db:
        return [r[0] for r in db.execute("SELECT id FROM short_term_memories ORDER BY id").fetchall()]


def test_a_killed_scale_run_goes_on_and_ends_where_an_unbroken_one_does(tmp_path: Path) -> None:
    days = 8
    whole, broken = tmp_path / "whole", tmp_path / "broken"
    assert main([*TINY, "--days", str(days), "--run", str(whole), "--out", str(tmp_path / "out1")]) == 0
    report = json.loads((tmp_path / "out1" / "scale.json").read_text())
    assert report["complete"] and report["days_done"] == days and report["memories"] > 0
    assert report["memories_per_s"] > 0 and report["recall_at_end"]["n"] > 0 and report["d1_mb"] > 0
    assert set(report["jobs"]) >= {"consolidate", "decay_and_prune"}

    child = subprocess.Popen([*CLI, *TINY, "--days", str(days), "--run", str(broken), "--out", str(tmp_path / "o2")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ})
    state = broken / "scale.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if state.exists() and json.loads(state.read_text())["done_days"] >= 2:
            break
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    cut = json.loads(state.read_text())["done_days"]
    assert 2 <= cut < days, "the kill came after the run ended: nothing was resumed"

    assert main([*TINY, "--days", str(days), "--run", str(broken), "--out", str(tmp_path / "o3")]) == 0
    resumed = json.loads((tmp_path / "o3" / "scale.json").read_text())
    assert resumed["complete"] and resumed["memories"] == report["memories"]
    assert memory_ids(broken) == memory_ids(whole)  # the same world, its cut day lived again, its memories once


def test_a_scale_run_refuses_a_folder_that_is_not_one(tmp_path: Path, capsys: object) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert main([*TINY, "--days", "1", "--run", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
