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
