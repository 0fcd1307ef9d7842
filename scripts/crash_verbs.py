"""Crash trials for the CLI verbs `demo`, `run`, `reembed --recreate` and `consolidate`: each runs as a real child
process (`memory_sim.cli.main`) on a real data folder (DuckDB for D1, embedded Chroma for Vectorize) and is
SIGKILLed at a seeded moment; then the next plain start runs (`memory-sim retry` with no flags, or `memory-sim
run` again for `run`, stopped with SIGTERM), and a fresh process measures:

- acknowledged memories lost: memories in D1 before the killed command, or found there right after the kill,
  that are missing after the next start (goal 0);
- pending after the next start: memories still waiting for the index (goal 0);
- manual steps: trials where anything more than the plain start was needed: it failed, memories are still
  pending, or D1 and the index disagree (`check` finds drift) (goal 0).

A trial kills the child inside its k-th embedding call (after its D1 batch committed, before the index write:
the window a crash leaves work in) or a seeded moment after that call began: up to the mean time an uncrashed
pilot run of the same command spent per call after its first (`run`: up to 4 s). Children embed with the hashing
test embedder (`cli` mode), so trials are fast and deterministic; everything else is the real CLI.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DIMENSIONS = 64
VERBS = ("demo", "run", "reembed", "consolidate")
FAST_RUN_SCALE = "21600"  # world seconds per real second: each job comes round about once a real second
CHILD_LIMIT_S = 60.0  # no child may run longer than this; a trial that hits it is counted as failed


# --- the children ----------------------------------------------------------------------------------------


def run_cli(argv: Sequence[str], marker: Path | None, stall_at: int | None) -> int:
    """`memory-sim <argv>` with the hashing embedder; each embedding of memories (not of queries) adds a line to
    `marker`, and the `stall_at`-th one sleeps there until the process is killed."""
    import memory_sim.builder as builder
    from memory_sim.cli import main
    from memory_sim.embedding.fake import HashingEmbedder

    class TrialEmbedder(HashingEmbedder):
        writes = 0

        def embed(self, texts: Sequence[str], *, query: bool = False) -> Any:
            if not query and marker is not None:
                TrialEmbedder.writes += 1
                with open(marker, "a", encoding="utf-8") as log:
                    log.write(f"embed {TrialEmbedder.writes}\n")
                while TrialEmbedder.writes == stall_at:
                    time.sleep(1.0)
            return super().embed(texts, query=query)

    builder._embedder_for_index = lambda *args, **options: TrialEmbedder(DIMENSIONS)  # the model, replaced
    return main(list(argv))


def prepare_folder(data: Path, days: int, npcs: int, seed: int) -> None:
    """A village of `days` days written through the library with its jobs on the sim clock, except consolidation:
    its diaries are left for `consolidate` (and `run`) to condense. The world time is saved, as the demo does."""
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.env import Env
    from memory_sim.memory.ledger import store
    from memory_sim.memory.models import HOURS_PER_DAY, WorldTime
    from memory_sim.memory.system import MemorySystem
    from memory_sim.scheduling import SimScheduler, memory_jobs
    from memory_sim.sim.clock import SimClock
    from memory_sim.sim.driver import DIARY_HOUR, save_day, save_npcs, save_tick
    from memory_sim.sim.world import Village

    village, clock = Village(npcs=npcs, seed=seed), SimClock()
    with Env.local(data, embedder=HashingEmbedder(DIMENSIONS)) as env:
        system = MemorySystem(env, clock=clock)
        scheduler = SimScheduler(system, [j for j in memory_jobs(system) if j.name != "consolidate"])
        save_npcs(env.DB, village)
        places: dict[str, str] = {}
        for hour in range(days * HOURS_PER_DAY):
            when = WorldTime.from_hours(hour)
            clock.advance_to(when)
            scheduler.tick(clock())
            tick = village.tick(when)
            system.remember_many(tick.memories)
            save_tick(env.DB, tick)
            places.update(tick.locations)
            if when.hour == DIARY_HOUR:
                for npc in village.npcs:
                    system.write_diary(npc.id, when.day)
                save_day(env.DB, village, places, when.day)
        store.set_meta(env.DB, "world_seconds", repr(clock()))


def inspect(data: Path) -> dict[str, Any]:
    """What a user would find: the memories in D1, those still waiting for the index, drift, the world time."""
    from memory_sim.check import check
    from memory_sim.env import Env
    from memory_sim.memory.ledger import store

    if not (data / "d1").exists():
        return {"ids": [], "pending": 0, "drift": {}, "world_seconds": None, "last_job_at": None}
    with Env.local(data) as env:
        db = env.DB
        ids = [r["id"] for r in db.prepare("SELECT id FROM short_term_memories").all().results]
        pending = db.prepare(
            "SELECT COUNT(*) AS n FROM short_term_memories WHERE index_state = 'pending'"
            " OR id IN (SELECT memory_id FROM embedding_outbox)"
        ).first("n")
        report = check(env)
        kinds = ("missing", "unknown", "disowned", "duplicated", "stranded", "metadata")
        drift = {k: len(getattr(report, k)) for k in kinds if getattr(report, k)}
        last_job = db.prepare("SELECT MAX(ran_at) AS t FROM job_runs").first("t")
        return {"ids": ids, "pending": int(pending or 0), "drift": drift,
                "world_seconds": store.get_meta(db, "world_seconds"), "last_job_at": last_job}


# --- the parent ------------------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", TQDM_DISABLE="1")


def spawn_cli(args: Sequence[str], logs: Path, *, marker: Path | None = None,
              stall_at: int | None = None) -> subprocess.Popen[bytes]:
    """The real CLI in a child process, its output in `logs`.out / .err (files: no pipe to fill up)."""
    command = [sys.executable, str(Path(__file__).resolve()), "cli"]
    if marker is not None:
        command += ["--marker", str(marker)] + ([] if stall_at is None else ["--stall-at", str(stall_at)])
    command += ["--", *args]
    with open(f"{logs}.out", "wb") as out, open(f"{logs}.err", "wb") as err:  # the child keeps its own copies
        return subprocess.Popen(command, stdout=out, stderr=err, env=_env(), cwd=ROOT)


def wait_for(done: Any, limit_s: float, child: subprocess.Popen[bytes] | None = None) -> bool:
    """Polls `done()` (a real child process's progress) until true, the child ends, or the limit passes."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if done():
            return True
        if child is not None and child.poll() is not None:
            return bool(done())
        time.sleep(0.05)
    return False


def embed_calls(marker: Path) -> int:
    return marker.read_bytes().count(b"\n") if marker.exists() else 0


def inspect_in_child(data: Path) -> dict[str, Any]:
    """`inspect` in a fresh process: Chroma caches an embedded folder's state per process."""
    command = [sys.executable, str(Path(__file__).resolve()), "inspect", "--data", str(data)]
    done = subprocess.run(command, capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=CHILD_LIMIT_S)
    if done.returncode != 0:
        raise RuntimeError(f"inspecting {data} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def stop_run(data: Path, logs: Path, sig: int = signal.SIGTERM, after_s: float = 0.5,
             options: Sequence[str] = ()) -> int:
    """Starts `memory-sim --data DATA run [options]`, waits until it says it is running, lets it run `after_s`,
    sends `sig`; returns its exit code (-9 if it ignored the signal for CHILD_LIMIT_S)."""
    child = spawn_cli(["--data", str(data), "run", *options], logs)
    out = Path(f"{logs}.out")
    wait_for(lambda: b"running the memory jobs" in out.read_bytes(), CHILD_LIMIT_S, child)
    time.sleep(after_s)
    child.send_signal(sig)
    try:
        return child.wait(timeout=CHILD_LIMIT_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        return -9


@dataclass
class Trial:
    verb: str
    call: int  # the kill is timed from this embedding call...
    stall: bool  # ...inside it, or
    delay_s: float = 0.0  # this long after it began
    killed: bool = True  # False: the child finished before the kill
    acked: int = 0  # memories in D1 before the command, or right after the kill
    lost: int = 0
    pending_after_kill: int = 0
    pending_after_start: int = 0
    drift_after_start: dict[str, int] | None = None
    next_start_exit: int = 0
    manual_steps: int = 0
    seconds: float = 0.0


def killed_command(verb: str, data: Path, seed: int) -> list[str]:
    return {
        "demo": ["demo", "--days", "2", "--npcs", "4", "--seed", str(seed), "--threads", "0", "--data", str(data)],
        "run": ["--data", str(data), "run", "--scale", FAST_RUN_SCALE],
        "reembed": ["--data", str(data), "reembed", "--recreate"],
        "consolidate": ["--data", str(data), "consolidate"],
    }[verb]


def kill_child(trial: Trial, data: Path, seed: int) -> None:
    """Runs the verb's command and SIGKILLs it inside its `call`-th embedding call or `delay_s` after it began."""
    marker = data.parent / f"{data.name}.marker"
    logs = data.parent / f"{data.name}.killed"
    command = killed_command(trial.verb, data, seed)
    child = spawn_cli(command, logs, marker=marker, stall_at=trial.call if trial.stall else None)
    wait_for(lambda: embed_calls(marker) >= trial.call, CHILD_LIMIT_S, child)
    if not trial.stall:
        wait_for(lambda: False, trial.delay_s, child)
    trial.killed = child.poll() is None
    child.kill()
    if child.wait() not in (0, -signal.SIGKILL):
        raise RuntimeError(f"{trial.verb} failed on its own: {Path(f'{logs}.err').read_text('utf-8')[-2000:]}")


def run_trial(trial: Trial, data: Path, template: Path, template_ids: set[str], seed: int) -> Trial:
    """One kill: `template` (holding `template_ids`) is copied to `data` first, except for the demo, which makes
    its own folder."""
    started = time.perf_counter()
    before: set[str] = set()
    if trial.verb != "demo":
        shutil.copytree(template, data)
        before = template_ids
    kill_child(trial, data, seed)
    after_kill = inspect_in_child(data)
    acked = before | set(after_kill["ids"])
    trial.pending_after_kill = after_kill["pending"]
    logs = data.parent / f"{data.name}.next"
    if trial.verb == "run":
        trial.next_start_exit = stop_run(data, logs)  # `memory-sim run`, no flags
    else:
        start = spawn_cli(["--data", str(data), "retry"], logs)  # `memory-sim retry`, no flags
        trial.next_start_exit = start.wait(timeout=CHILD_LIMIT_S)
    after = inspect_in_child(data)
    trial.acked, trial.lost = len(acked), len(acked - set(after["ids"]))
    trial.pending_after_start, trial.drift_after_start = after["pending"], after["drift"]
    trial.manual_steps = int(trial.next_start_exit != 0 or after["pending"] > 0 or bool(after["drift"]))
    trial.seconds = round(time.perf_counter() - started, 1)
    return trial


def pilot(verb: str, data: Path, template: Path, seed: int) -> tuple[int, float]:
    """An uncrashed run of the verb's command: how many embedding calls it made, and the seconds from its first
    one to its exit. `run` does not exit: 1 call, 4 s (jobs come round about once a real second)."""
    if verb == "run":
        return 1, 4.0
    if verb != "demo":
        shutil.copytree(template, data)
    marker = data.parent / f"{data.name}.marker"
    child = spawn_cli(killed_command(verb, data, seed), data.parent / f"{data.name}.pilot", marker=marker)
    wait_for(lambda: embed_calls(marker) > 0, CHILD_LIMIT_S, child)
    first = time.monotonic()
    child.wait(timeout=CHILD_LIMIT_S)
    return max(1, embed_calls(marker)), time.monotonic() - first


def plan_trials(kills_per_verb: int, seed: int, pilots: dict[str, tuple[int, float]]) -> list[Trial]:
    """Per verb: the first kill inside its first embedding call (the window that leaves work pending); the others
    from a seeded call, inside it (every other one, where there is more than one call) or a seeded delay after it
    began, up to the pilot's mean time per call after the first."""
    rng = random.Random(seed)
    trials = []
    for verb, (calls, rest_s) in pilots.items():
        for n in range(kills_per_verb):
            call = 1 if n == 0 else rng.randint(1, calls)
            if n == 0 or (n % 2 == 0 and calls > 1):
                trials.append(Trial(verb, call, True))
            else:
                trials.append(Trial(verb, call, False, round(rng.uniform(0.0, rest_s / calls), 3)))
    return trials


def run_verb_trials(work: Path, *, kills_per_verb: int, seed: int, verbs: Sequence[str] = VERBS,
                    progress: bool = False) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    template = work / "template"
    prepare_folder(template, days=3, npcs=4, seed=seed)
    template_ids = set(inspect_in_child(template)["ids"])
    pilots = {v: pilot(v, work / f"pilot-{v}", template, seed) if kills_per_verb > 1 else (1, 0.0) for v in verbs}
    trials = []
    for number, trial in enumerate(plan_trials(kills_per_verb, seed, pilots), start=1):
        trials.append(run_trial(trial, work / f"trial-{number}", template, template_ids, seed))
        if progress:
            t = trials[-1]
            when = f"embedding call {t.call}" + ("" if t.stall else f" + {t.delay_s} s")
            print(f"{t.verb} kill {when}: killed={t.killed} acked={t.acked} lost={t.lost} pending "
                  f"{t.pending_after_kill} -> {t.pending_after_start} drift={t.drift_after_start} "
                  f"exit={t.next_start_exit} ({t.seconds} s)", flush=True)
    return summarise_verbs(trials, kills_per_verb, seed, time.perf_counter() - started)


def summarise_verbs(trials: list[Trial], kills_per_verb: int, seed: int, seconds: float) -> dict[str, Any]:
    by_verb = {
        verb: {
            "kills": sum(t.killed for t in mine),
            "lost": sum(t.lost for t in mine),
            "pending_after_kill": sum(t.pending_after_kill for t in mine),
            "pending_after_next_start": sum(t.pending_after_start for t in mine),
            "manual_steps": sum(t.manual_steps for t in mine),
        }
        for verb in dict.fromkeys(t.verb for t in trials)
        if (mine := [t for t in trials if t.verb == verb])
    }
    return {
        "kills_per_verb": kills_per_verb, "seed": seed, "trials": len(trials),
        "kills": sum(t.killed for t in trials),
        "acknowledged_lost": sum(t.lost for t in trials),
        "pending_after_kill": sum(t.pending_after_kill for t in trials),
        "pending_after_next_start": sum(t.pending_after_start for t in trials),
        "manual_steps": sum(t.manual_steps for t in trials),
        "by_verb": by_verb, "seconds": round(seconds, 1), "trials_detail": [asdict(t) for t in trials],
    }


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    cli = sub.add_parser("cli", help="the real CLI with the hashing embedder")
    cli.add_argument("--marker", type=Path)
    cli.add_argument("--stall-at", type=int)
    cli.add_argument("args", nargs=argparse.REMAINDER)
    sub.add_parser("inspect").add_argument("--data", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.mode == "cli":
        rest = args.args[1:] if args.args[:1] == ["--"] else args.args
        return run_cli(rest, args.marker, args.stall_at)
    print(json.dumps(inspect(args.data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
