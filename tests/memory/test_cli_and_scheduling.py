"""The CLI's front door and the APScheduler service's configuration (no model, no sleeping)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_sim.cli import build_parser, main
from memory_sim.memory.system import MemorySystem
from memory_sim.scheduling import WorldClock, build_service


def test_every_memory_verb_has_help() -> None:
    parser = build_parser()
    verbs = {"demo", "remember", "recall", "consolidate", "prune", "retry", "stats", "reembed", "run", "compact"}
    sub = next(a for a in parser._actions if a.dest == "command")
    assert verbs <= set(sub.choices)  # type: ignore[union-attr]
    assert all(sub.choices[v].format_help() for v in verbs)  # type: ignore[union-attr]


def test_demo_refuses_a_folder_it_did_not_make(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "precious.txt").write_text("keep me")
    assert main(["demo", "--data", str(tmp_path)]) == 2
    assert "not made by the demo" in capsys.readouterr().err
    assert (tmp_path / "precious.txt").exists()


def test_service_jobs_never_overlap_and_coalesce(system: MemorySystem) -> None:
    scheduler = build_service(system, scale=60.0)
    jobs = {job.id: job for job in scheduler.get_jobs()}
    assert set(jobs) == {"retry_pending", "decay_and_prune", "consolidate", "compact"}
    assert all(job.max_instances == 1 and job.coalesce for job in jobs.values())
    assert jobs["consolidate"].trigger.interval.total_seconds() == 6 * 3600 / 60
    assert scheduler._executors["default"]._pool._max_workers == 1  # one job at a time


def test_world_clock_maps_wall_seconds_to_world_seconds() -> None:
    wall = iter([100.0, 110.0])
    clock = WorldClock(origin=3600.0, scale=60.0, wall=lambda: next(wall))
    assert clock() == 3600.0 + 10 * 60
