"""After a crash, the next plain start recovers by itself; `memory-sim run` stops cleanly on SIGTERM and SIGINT.

The subprocess tests run the real CLI (`memory_sim.cli.main`) in child processes on real DuckDB + embedded Chroma
folders, with the hashing test embedder in place of the model (scripts/crash_verbs.py)."""

from __future__ import annotations

import re
import shutil
import signal
from pathlib import Path

import pytest
from crash_verbs import (
    FAST_RUN_SCALE,
    inspect_in_child,
    prepare_folder,
    run_verb_trials,
    spawn_cli,
    stop_run,
    wait_for,
)

from memory_sim.check import check, repair
from memory_sim.memory.ledger import store
from memory_sim.memory.models import ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock

SUMMARY = re.compile(r"stopped at day (\d+) hour (\d+): (\d+) memories, (\d+) indexed, (\d+) pending")


@pytest.fixture(scope="module")
def village_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("crash-recovery") / "template"
    prepare_folder(folder, days=3, npcs=4, seed=3)  # diaries left for consolidation: `run` has writing to do
    return folder


@pytest.fixture
def folder(village_template: Path, tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(village_template, data)
    return data


# --- the rule: work a dead process left is due at the next open, once ------------------------------------


class DyingEmbedder:
    """Raises KeyboardInterrupt (the process is going down) while `dying`, fails while `down`."""

    def __init__(self, inner: object) -> None:
        self.inner, self.dying, self.down, self.calls = inner, False, False, 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def embed(self, texts: list[str], *, query: bool = False) -> object:
        from memory_sim.errors import EmbeddingUnavailable

        self.calls += 1
        if self.dying:
            raise KeyboardInterrupt
        if self.down:
            raise EmbeddingUnavailable("injected: embedding provider unavailable (HTTP 503)")
        return self.inner.embed(texts, query=query)  # type: ignore[attr-defined]


def test_work_a_dead_process_left_is_due_at_the_next_open_once() -> None:
    from memory_env import build_env

    dead_clock = SimClock(WorldTime(9, 12))  # the dead process was on day 9; it never saved that
    env = build_env(dead_clock)
    embedder = DyingEmbedder(env.embedder)
    env.embedder = embedder  # type: ignore[assignment]
    embedder.dying = True
    with pytest.raises(KeyboardInterrupt):  # D1's batch committed, the process died in the embedding call
        MemorySystem(env, clock=dead_clock).remember(ShortTermMemory("tom", "The forge fire went out.", 0.9, WorldTime(9, 12)))
    # pending in D1, with no outbox row (one is made only when an attempt fails): the retry job's work, no drift
    assert store.pending_size(env.DB) == 1 and store.outbox_size(env.DB) == 0
    report = check(env)
    assert report.pending == 1 and report.stranded == [] and report.clean

    saved = WorldTime(2, 23).to_seconds()  # the next process opens at the last saved world time, 7 days earlier
    embedder.dying, embedder.down = False, True
    reopened = MemorySystem(env, clock=lambda: saved)
    assert reopened.retry_pending().failed == 1  # due at once, whatever the clock: one attempt...
    calls = embedder.calls
    assert reopened.retry_pending().failed == 0 and embedder.calls == calls  # ...then the usual backoff
    embedder.down = False
    assert MemorySystem(env, clock=lambda: saved + 3600).retry_pending().embedded == 1
    assert store.outbox_size(env.DB) == 0 and store.pending_size(env.DB) == 0 and check(env).due == 1


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_a_remember_cut_short_before_the_index_is_retried_from_d1_alone(tmp_path: Path, engine: str) -> None:
    """No outbox row is written with a memory: the `pending` row itself is what the next retry finds, on either
    D1 engine; only an outbox row out of attempts is given up on (`stranded`)."""
    from memory_sim.builder import local_d1_account
    from memory_sim.env import Env

    clock = SimClock(WorldTime(4, 9))
    env = Env.in_memory(clock, db=local_d1_account(tmp_path, engine).create("memories"))
    embedder = DyingEmbedder(env.embedder)
    env.embedder = embedder  # type: ignore[assignment]
    embedder.dying = True
    memory = ShortTermMemory("tom", "The forge fire went out.", 0.9, WorldTime(4, 9))
    with pytest.raises(KeyboardInterrupt):
        MemorySystem(env, clock=clock).remember(memory)
    assert (store.pending_size(env.DB), store.outbox_size(env.DB)) == (1, 0)
    assert [r["memory_id"] for r in store.live_outbox(env.DB, 12)] == [memory.id]
    embedder.dying = False
    reopened = MemorySystem(env, clock=clock)
    assert reopened.retry_pending().embedded == 1 and reopened.memory(memory.id).index_state == "indexed"
    assert store.live_outbox(env.DB, 12) == [] and check(env).clean

    # an outbox row out of attempts: no retry takes it; check reports it and repair gives it its attempts back
    db = env.DB
    db.batch(store.set_state(db, [memory.id], "pending") + store.enqueue_many(db, [memory.id], 0.0)
             + [store.reschedule(db, memory.id, reopened.config.retry_max_attempts, 0.0, "injected")])
    assert store.live_outbox(db, reopened.config.retry_max_attempts) == []
    report = check(env)
    assert report.stranded == [memory.id] and not report.clean
    assert repair(env, report).requeued == 1 and check(env).clean
    assert reopened.retry_pending().embedded == 1 and store.pending_size(db) == 0


# --- `memory-sim run` stops cleanly ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_run_stops_cleanly_on_a_signal(folder: Path, tmp_path: Path, sig: int) -> None:
    before = float(inspect_in_child(folder)["world_seconds"])
    code = stop_run(folder, tmp_path / "run", sig, after_s=1.5, options=["--scale", FAST_RUN_SCALE])
    assert code == 0
    lines = (tmp_path / "run.out").read_text("utf-8").splitlines()
    summaries = [m for line in lines if (m := SUMMARY.fullmatch(line))]
    assert len(summaries) == 1 and lines[-1] == summaries[0].group(0)
    after = inspect_in_child(folder)
    saved = float(after["world_seconds"])
    assert saved >= before + 1.5 * float(FAST_RUN_SCALE) * 0.9  # the world time it reached is kept
    day, hour, memories, indexed, pending = map(int, summaries[0].groups())
    assert (day, hour) == (WorldTime.from_seconds(saved).day, WorldTime.from_seconds(saved).hour)
    assert memories == len(after["ids"]) and pending == after["pending"] == 0 and after["drift"] == {}
    assert indexed > 0


# --- kill -9, then a plain start --------------------------------------------------------------------------


def kill_inside_first_embedding(command: list[str], logs: Path) -> None:
    """Runs the CLI until it is inside its first embedding call (its D1 batch committed), then SIGKILLs it."""
    marker = logs.parent / "marker"
    child = spawn_cli(command, logs, marker=marker, stall_at=1)
    assert wait_for(marker.exists, 60, child), (logs.parent / f"{logs.name}.err").read_text()
    child.send_signal(signal.SIGKILL)
    child.wait()


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("verb", [["retry"], ["remember", "tom", "The bellows need new leather."]], ids=["retry", "remember"])
def test_a_killed_run_leaves_nothing_pending_after_a_plain_start(folder: Path, tmp_path: Path, verb: list[str]) -> None:
    kill_inside_first_embedding(["--data", str(folder), "run", "--scale", FAST_RUN_SCALE], tmp_path / "killed")
    left = inspect_in_child(folder)
    assert left["pending"] > 0  # the dead run queued memories it never indexed
    start = spawn_cli(["--data", str(folder), *verb], tmp_path / "next")  # no flags
    assert start.wait(timeout=60) == 0
    after = inspect_in_child(folder)
    assert set(left["ids"]) <= set(after["ids"])  # nothing lost
    assert after["pending"] == 0 and after["drift"] == {}


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_killed_recreating_reembed_is_finished_by_a_plain_retry(folder: Path, tmp_path: Path) -> None:
    kill_inside_first_embedding(["--data", str(folder), "reembed", "--recreate"], tmp_path / "killed")
    left = inspect_in_child(folder)
    assert left["pending"] > 0 and left["drift"] == {}  # the old index is gone, and D1 says so
    assert spawn_cli(["--data", str(folder), "retry"], tmp_path / "next").wait(timeout=60) == 0
    after = inspect_in_child(folder)
    assert after["ids"] == left["ids"] and after["pending"] == 0 and after["drift"] == {}


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_restarted_run_goes_on_from_the_world_time_the_killed_one_reached(folder: Path, tmp_path: Path) -> None:
    child = spawn_cli(["--data", str(folder), "run", "--scale", FAST_RUN_SCALE], tmp_path / "killed")
    out = tmp_path / "killed.out"
    assert wait_for(lambda: b"running the memory jobs" in out.read_bytes(), 60, child)
    wait_for(lambda: False, 3.0)  # let its jobs run for ~18 world hours
    child.send_signal(signal.SIGKILL)
    child.wait()
    left = inspect_in_child(folder)
    reached = float(left["last_job_at"])
    assert reached > float(left["world_seconds"])  # it never saved the world time it reached
    restart = spawn_cli(["--data", str(folder), "run", "--for-seconds", "0.5"], tmp_path / "next")
    assert restart.wait(timeout=60) == 0
    assert float(inspect_in_child(folder)["world_seconds"]) >= reached


# --- the bounded trials ------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_kills_during_demo_run_reembed_and_consolidate_need_no_manual_step(tmp_path: Path) -> None:
    result = run_verb_trials(tmp_path, kills_per_verb=1, seed=5)  # each inside its first embedding call
    assert result["kills"] == 4 and result["pending_after_kill"] > 0  # the kills left work behind
    assert result["acknowledged_lost"] == 0
    assert result["pending_after_next_start"] == 0
    assert result["manual_steps"] == 0
