"""The world's time is the folder's, whichever entry point moves it, and each count has one definition that
`stats`, `run`, the inspector and the Python API share (forgotten memories counted apart)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_sim import Env, MemorySystem
from memory_sim.cli import main
from memory_sim.inspector.queries import village
from memory_sim.memory.ledger.counts import memory_counts
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.scheduling import day_summary
from memory_sim.settings import HASHING_MODEL


def cli(capsys: pytest.CaptureFixture[str], folder: Path, *argv: str) -> object:
    capsys.readouterr()
    assert main(["--data", str(folder), "--model", HASHING_MODEL, *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_run_starts_from_the_day_a_cli_remember_reached(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "village"
    cli(capsys, folder, "remember", "bram", "The barley came up green.", "--day", "3", "--hour", "9")
    stopped = cli(capsys, folder, "run", "--scale", "1", "--for-seconds", "0.3")
    assert isinstance(stopped, dict)
    assert (stopped["stopped_at"]["day"], stopped["stopped_at"]["hour"]) == (3, 9)  # not day 0
    added = cli(capsys, folder, "remember", "bram", "Rain at last.")
    assert isinstance(added, dict) and added["id"].startswith("bram-3-9-")  # the world's day and hour, not day 0's


def test_a_job_never_runs_twice_for_the_same_world_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "village"
    cli(capsys, folder, "remember", "bram", "The barley came up green.", "--day", "2")
    first = cli(capsys, folder, "prune")
    again = cli(capsys, folder, "prune")
    assert isinstance(first, dict) and first["job"] == "decay_and_prune" and "skipped" not in first
    assert isinstance(again, dict) and again["skipped"].startswith("already done for day 2")
    cli(capsys, folder, "run", "--scale", "1", "--for-seconds", "0.5")  # `run` at day 2 too: the day is done
    stats = cli(capsys, folder, "stats")
    assert isinstance(stats, dict) and stats["decay_runs"] == 1


def test_every_count_is_the_same_in_stats_run_the_inspector_and_the_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "village"
    with Env.local(folder, embed_model=HASHING_MODEL) as env:
        system = MemorySystem(env, clock=lambda: 3 * 86400.0)
        kept = [ShortTermMemory("bram", text, 0.9, WorldTime(day, 9)) for day, text in
                ((1, "Cora cured my fever."), (2, "Rain flattened the barley."))]
        gone = ShortTermMemory("bram", "I owe Tom two coins.", 0.8, WorldTime(3, 9))
        for memory in (*kept, gone):
            system.remember(memory)
        system.forget(gone.id, reason="the player asked")
        api = system.stats()
        assert (api["memories"], api["forgotten"], api["indexed"]) == (2, 1, 2)
        assert day_summary(system).endswith("2 memories (1 forgotten), 2 indexed, 0 pending")
        _, npcs = village(env.DB)
        assert (npcs[0].memories, npcs[0].forgotten, npcs[0].vectors) == (2, 1, 2)
        assert memory_counts(env.DB, "bram") == {k: api[k] for k in memory_counts(env.DB)}
    stats = cli(capsys, folder, "stats")
    stopped = cli(capsys, folder, "run", "--scale", "1", "--for-seconds", "0.3")
    assert isinstance(stats, dict) and isinstance(stopped, dict)
    assert {k: stats[k] for k in ("memories", "forgotten", "indexed", "pending", "summaries")} == {
        k: stopped["stopped_at"][k] for k in ("memories", "forgotten", "indexed", "pending", "summaries")}
    assert (stats["memories"], stats["forgotten"]) == (2, 1)
