"""What the library and `memory-sim run` say while they work (issue section 5)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from memory_sim.cli import main
from memory_sim.memory.system import MemorySystem
from memory_sim.scheduling import build_service

FAKE = ["--model", "fake/hashing"]


def test_service_jobs_are_named_and_apscheduler_is_kept_at_warning(system: MemorySystem) -> None:
    logging.getLogger("apscheduler").setLevel(logging.NOTSET)
    scheduler = build_service(system, scale=60.0)
    assert {job.name for job in scheduler.get_jobs()} == {"retry_pending", "decay_and_prune", "consolidate", "compact"}
    assert logging.getLogger("apscheduler").level == logging.WARNING


def test_run_logs_one_line_per_world_day_and_no_scheduler_chatter(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    logging.getLogger("apscheduler").setLevel(logging.NOTSET)  # as in a fresh process
    data = str(tmp_path / "data")
    assert main(["remember", "tom", "fixed the fence", "--importance", "0.9", "--data", data, *FAKE]) == 0
    caplog.set_level(logging.INFO)
    # 86400x: a world day a second; the daily job runs at once and about twice more.
    assert main(["run", "--scale", "86400", "--for-seconds", "2.5", "--data", data, *FAKE]) == 0
    assert not [r for r in caplog.records if r.name.startswith("apscheduler") and r.levelno < logging.WARNING]
    days = [r.getMessage() for r in caplog.records if r.name == "memory_sim.scheduling"]
    assert 1 <= len(days) <= 4 and all(" memories, " in line and line.startswith("day ") for line in days)
    assert "stopped at day " in capsys.readouterr().out


def test_loading_a_model_is_said_once_on_stderr_and_the_thread_setting_reaches_torch(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    code = ("import sys, torch; from memory_sim.cli import main; code = main(sys.argv[1:]); "
            "print('torch threads', torch.get_num_threads()); sys.exit(code)")
    env = {**os.environ, "MEMORY_SIM_EMBED_RUNTIME": "torch", "MEMORY_SIM_EMBED_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code, "remember", "tom", "fixed the fence", "--importance", "0.9",
         "--data", str(tmp_path / "data"), "--model", "minilm"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    loading = [line for line in done.stderr.splitlines() if line.startswith("loading ")]
    assert loading == ["loading sentence-transformers/all-MiniLM-L6-v2 (torch, 1 threads)..."]
    assert "torch threads 1" in done.stdout


def test_the_public_values_are_exported_from_the_top_level_lazily() -> None:
    import subprocess
    import sys

    code = ("import sys, memory_sim; from memory_sim import Env, MemorySystem, ShortTermMemory, WorldTime, SimClock, "
            "Settings; print(sorted(set(memory_sim.__all__) - {'__version__'}), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ("['Env', 'MemorySystem', 'Settings', 'ShortTermMemory', 'SimClock', 'WorldTime'] False")


def test_the_demo_verdict_says_who_feels_what_and_repeats_are_shown_once() -> None:
    from types import SimpleNamespace

    from memory_sim.cli.verdict import distinct, verdict

    found = [SimpleNamespace(text=t) for t in (
        "Tom mended the fence by the mill today", "Tom mended the fence by the mill today.",
        "The blacksmith was rude at the market", "Tom mended the fence by the old mill today")]
    assert [f.text for f in distinct(found, 5)] == [found[0].text, found[2].text]
    line = verdict("Margaret", "baker", "Tom", 0.42, 0.12, [f.text for f in distinct(found, 5)])
    assert line == ("Margaret (baker) on Tom: affinity +0.42 (up 0.30 over the run); remembers: Tom mended the fence "
                    "by the mill today; The blacksmith was rude at the market")
    assert "down 0.20" in verdict("M", "baker", "Tom", -0.1, 0.1, [])
    assert verdict("M", "baker", "Tom", 0.4, 0.4, [], "M trusts Tom.") == (
        "M (baker) on Tom: M trusts Tom. Affinity +0.40 (unchanged over the run); remembers: nothing about them")


def test_the_demo_prints_the_verdict_before_the_memories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--days", "2", "--npcs", "3", "--data", str(tmp_path / "demo"), *FAKE]) == 0
    out = capsys.readouterr().out.split("What does Margaret think of Tom?")[1].splitlines()
    assert out[1].startswith("Margaret (") and " on Tom: " in out[1] and "ffinity " in out[1] and "remembers:" in out[1]
    shown = [line.split("] ", 1)[1] for line in out if line.startswith("  score ")]
    assert len(shown) == len(set(shown))
