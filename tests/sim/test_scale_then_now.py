"""scripts/bench_scale_then_now.py with this checkout as both versions, tiny: each side a real run in its own
process (the default local stack, the bundled model), the same world on both, the report's figures filled in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "bench_scale_then_now.py"


@pytest.mark.slow
def test_the_same_checkout_then_and_now_lives_the_same_world(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--then", str(ROOT), "--npcs", "10", "--days", "1", "--rounds", "1",
         "--first", "now", "--out", str(tmp_path)], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    rounds = [line for line in done.stderr.splitlines() if line.startswith("round ")]
    assert [line.split(", ")[1].split(":")[0] for line in rounds] == ["now", "then"]  # --first now
    report = json.loads((tmp_path / "scale_then_now.json").read_text())
    then, now = report["runs"]["then"][0], report["runs"]["now"][0]
    assert then["memory_sim"] == now["memory_sim"] == str(ROOT) and then["foreign_modules"] == []
    assert then["memories"] == now["memories"] > 0 and then["per_day"][0][0] == then["memories"]
    assert report["same_memories"] and then["memory_digest"] == now["memory_digest"]
    assert then["loop_s"] > 0 and then["cpu_s"] > 0 and then["memories_per_s"] > 0
    assert report["ratio_new_over_old"]["memories_per_s"] > 0 and report["then"]["commit"]
    assert "memories/s" in (tmp_path / "scale_then_now.md").read_text()


def test_it_refuses_a_folder_that_is_not_a_checkout(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--then", str(tmp_path), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "not a checkout of memory_sim" in done.stderr
    assert not (tmp_path / "scale_then_now.json").exists()


STOPPED_RUN = """round 1/1, now: 10 NPCs, 4 days
  day 1/4: 60 memories, 1.0 s
  day 2/4: 70 memories, 1.5 s
  day 3/4: 65 memories, 2.0 s
  day 4/4: 66 memories, 2.0 s
  261 memories in 6.5 s (7.0 CPU s): 40.2 memories/s
round 1/1, then: 10 NPCs, 4 days
some warning the model printed
  day 1/4: 60 memories, 3.0 s
  day 2/4: 70 memories, 4.5 s
  day 3/4: 65 memories, 8.0 s
"""


def test_a_stopped_run_is_read_back_from_its_log_over_the_days_both_sides_lived(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(STOPPED_RUN)
    done = subprocess.run([sys.executable, str(SCRIPT), "--from-log", str(log), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "scale_then_now_log.json").read_text())
    assert report["days_both"] == 3 and report["days"] == {"then": 3, "now": 4}
    assert report["same_memories_per_day"] and report["memories"] == 195
    assert (report["then_s"], report["now_s"], report["ratio_new_over_old"]) == (15.5, 4.5, 3.44)
    assert report["finished"] == {"now": {"memories": 261, "loop_s": 6.5, "cpu_s": 7.0, "memories_per_s": 40.2}}
    assert [(c["days"], c["ratio"]) for c in report["stretches"]] == [("1-3", 3.44)]
    assert "**3.44x**" in (tmp_path / "scale_then_now_log.md").read_text()


def test_a_log_without_a_day_of_both_sides_says_so(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(STOPPED_RUN.split("round 1/1, then")[0])
    done = subprocess.run([sys.executable, str(SCRIPT), "--from-log", str(log), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "no day that both sides lived" in done.stderr
