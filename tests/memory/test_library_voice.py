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
    assert {job.name for job in scheduler.get_jobs()} == {"retry_pending", "decay_and_prune", "consolidate"}
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
