"""Crash trials: a child process runs the village with `remember` on real DuckDB (D1) and embedded Chroma
(Vectorize); the parent SIGKILLs it at seeded random moments, restarts it, and checks after each kill:

1. no memory that `remember_many` returned for is missing from D1 (the child appends each returned id to a log,
   flushed and fsynced, only AFTER the call returns);
2. after a plain start (the folder's own world time, one `retry_pending`, as `memory-sim retry` with no flags
   does), nothing is pending and every memory D1 marks for the index is in it exactly once;
3. D1's ledger and the index agree (`memory_sim.check.check`); any drift is counted, repaired and re-checked.

Then (`--verb-kills N`, scripts/crash_verbs.py) N kills each during the CLI's `demo`, `run`, `reembed --recreate`
and `consolidate`, each followed by the next plain start.

Embeddings come from the `HashingEmbedder` (injected through `Env.local(..., embedder=...)`), so trials are fast and
deterministic; the storage paths are the real ones.

    .venv/bin/python scripts/crash_trials.py --memories 10000 --kills 20 --verb-kills 5 --seed 8 \
        --out benchmarks/reliability.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DIMENSIONS = 64
NPCS = 10


# --- the child: the village, logging what remember returned ------------------------------------------------


def hours_for(memories: int, npcs: int, seed: int) -> int:
    """How many village hours produce `memories` memories (the village is seeded: pure and cheap)."""
    from memory_sim.memory.models import WorldTime
    from memory_sim.sim.world import Village

    village, made, hour = Village(npcs=npcs, seed=seed), 0, 0
    while made < memories:
        made += len(village.tick(WorldTime.from_hours(hour)).memories)
        hour += 1
    return hour


def read_log(path: Path) -> tuple[set[str], int]:
    """The acknowledged ids and the last hour completed (-1: none). A torn last line is ignored."""
    acked: set[str] = set()
    last_hour = -1
    if not path.exists():
        return acked, last_hour
    for line in path.read_text("utf-8").splitlines():
        kind, _, value = line.partition(" ")
        if kind == "id" and value:
            acked.add(value)
        elif kind == "hour" and value.isdigit():
            last_hour = int(value)
    return acked, last_hour


class AckLog:
    def __init__(self, path: Path) -> None:
        self._file = open(path, "a", encoding="utf-8")

    def write(self, lines: Sequence[str]) -> None:
        self._file.write("".join(f"{line}\n" for line in lines))
        self._file.flush()
        os.fsync(self._file.fileno())


def run_child(data: Path, log_path: Path, hours: int, seed: int, npcs: int) -> None:
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.env import Env
    from memory_sim.memory.models import WorldTime
    from memory_sim.memory.system import MemorySystem
    from memory_sim.scheduling import SimScheduler
    from memory_sim.sim.clock import SimClock
    from memory_sim.sim.driver import DIARY_HOUR, save_day, save_npcs, save_tick
    from memory_sim.sim.world import Village

    log = AckLog(log_path)

    class LoggingSystem(MemorySystem):
        def remember_many(self, memories, *, index_all=False):  # type: ignore[no-untyped-def]
            done = super().remember_many(memories, index_all=index_all)
            log.write([f"id {m.id}" for m in memories])  # only after remember returned
            return done

    _, last_hour = read_log(log_path)
    village, clock = Village(npcs=npcs, seed=seed), SimClock()
    for hour in range(last_hour + 1):  # replay the seeded world up to where the last run finished
        village.tick(WorldTime.from_hours(hour))
    env = Env.local(data, embedder=HashingEmbedder(DIMENSIONS))
    system = LoggingSystem(env, clock=clock)
    scheduler, db, places = SimScheduler(system), env.DB, {}
    save_npcs(db, village)
    print("ready", flush=True)
    for hour in range(last_hour + 1, hours):
        when = WorldTime.from_hours(hour)
        clock.advance_to(when)
        scheduler.tick(clock())
        tick = village.tick(when)
        system.remember_many(tick.memories)
        save_tick(db, tick)
        places.update(tick.locations)
        if when.hour == DIARY_HOUR:
            for npc in village.npcs:
                system.write_diary(npc.id, when.day)
            save_day(db, village, places, when.day)
        log.write([f"hour {hour}"])
    env.close()
    print("done", flush=True)


# --- the parent: kill, restart, verify ---------------------------------------------------------------------


@dataclass
class Verdict:
    kill: int
    acked: int
    memories_in_d1: int
    lost: int  # acknowledged but missing from D1
    retried: int
    due: int
    vectors: int
    duplicated: int
    missing_after_retry: int
    pending_after_retry: int = 0  # still waiting for the index after the plain start
    drift: dict[str, int] = field(default_factory=dict)  # kinds of drift check() found after the retry
    repaired: int = 0
    clean_after: bool = True
    seconds: float = 0.0


def verify(data: Path, log_path: Path, kill: int) -> Verdict:
    from memory_sim.check import check, repair
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.env import Env
    from memory_sim.memory.ledger import store
    from memory_sim.memory.system import MemorySystem

    started = time.perf_counter()
    acked, _ = read_log(log_path)
    with Env.local(data, embedder=HashingEmbedder(DIMENSIONS)) as env:
        in_d1 = {r["id"] for r in env.DB.prepare("SELECT id FROM short_term_memories").all().results}
        now = store.world_seconds(env.DB)  # what a plain start opens at: no time passed in by hand
        system = MemorySystem(env, clock=lambda: now)
        retried = system.retry_pending().embedded
        report = check(env)
        drift = {k: len(getattr(report, k)) for k in ("missing", "unknown", "disowned", "duplicated", "stranded", "metadata")}
        verdict = Verdict(kill, len(acked), len(in_d1), len(acked - in_d1), retried, report.due, report.vectors,
                          len(report.duplicated), len(report.missing), waiting(env),
                          {k: v for k, v in drift.items() if v})
        if not report.clean:
            verdict.repaired = repair(env, report, now=now).upserted + len(report.disowned) + len(report.unknown)
            verdict.clean_after = check(env).clean
    verdict.seconds = round(time.perf_counter() - started, 2)
    return verdict


def waiting(env: Any) -> int:
    """Memories still waiting for the index: `pending` in D1 (with or without an outbox row), or in the outbox."""
    return int(env.DB.prepare(
        "SELECT COUNT(*) AS n FROM short_term_memories WHERE index_state = 'pending'"
        " OR id IN (SELECT memory_id FROM embedding_outbox)"
    ).first("n") or 0)


def verify_in_child(data: Path, log_path: Path, kill: int) -> Verdict:
    """`verify` in a fresh process: Chroma caches an embedded folder's state per process, so a process that
    opened it before the child wrote to it would read stale segments ("Error finding id")."""
    command = [sys.executable, str(Path(__file__).resolve()), "verify", "--data", str(data), "--log", str(log_path),
               "--kill", str(kill)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"verify after kill {kill} failed: {done.stderr[-2000:]}")
    return Verdict(**json.loads(done.stdout.strip().splitlines()[-1]))


def spawn(data: Path, log_path: Path, hours: int, seed: int, npcs: int) -> subprocess.Popen[str]:
    command = [sys.executable, str(Path(__file__).resolve()), "child", "--data", str(data), "--log", str(log_path),
               "--hours", str(hours), "--seed", str(seed), "--npcs", str(npcs)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def wait_ready(child: subprocess.Popen[str]) -> None:
    assert child.stdout is not None
    line = child.stdout.readline()
    if line.strip() != "ready":
        raise RuntimeError(f"the child did not start: {line!r}")


def acked_count(log_path: Path) -> int:
    if not log_path.exists():
        return 0
    text = log_path.read_bytes()
    return text.count(b"\nid ") + text.startswith(b"id ")


def kill_at(child: subprocess.Popen[str], log_path: Path, point: int, jitter_s: float, rng: random.Random) -> None:
    """Waits until the child has acknowledged `point` memories (or ended), lets it run a seeded random moment
    more, then SIGKILLs it wherever it is: inside a D1 batch, a Chroma write, a job, a log write."""
    while child.poll() is None and acked_count(log_path) < point:
        time.sleep(0.02)  # polling a real child process
    time.sleep(rng.uniform(0.0, jitter_s))
    child.send_signal(signal.SIGKILL)
    child.wait()


def run_trials(data: Path, *, memories: int, kills: int, seed: int, jitter_s: float = 0.5, npcs: int = NPCS,
               progress: bool = False) -> dict[str, Any]:
    """`kills` SIGKILLs at seeded points spread over the run (a memory count, then a random delay), a verdict
    after each from a fresh process, then a run to the end and a last verdict."""
    rng = random.Random(seed)
    data.mkdir(parents=True, exist_ok=True)
    log_path = data / "acked.log"
    hours = hours_for(memories, npcs, seed)
    points = sorted(rng.sample(range(memories), kills))
    verdicts: list[Verdict] = []
    started = time.perf_counter()
    for kill, point in enumerate(points, start=1):
        child = spawn(data / "store", log_path, hours, seed, npcs)
        wait_ready(child)
        kill_at(child, log_path, point, jitter_s, rng)
        verdicts.append(verify_in_child(data / "store", log_path, kill))
        if progress:
            v = verdicts[-1]
            print(f"kill {kill} (after {point}): acked={v.acked} in_d1={v.memories_in_d1} lost={v.lost} "
                  f"retried={v.retried} drift={v.drift} ({time.perf_counter() - started:.0f} s)", flush=True)
    child = spawn(data / "store", log_path, hours, seed, npcs)
    assert child.stdout is not None
    tail = child.stdout.read()
    if child.wait() != 0 or "done" not in tail:
        raise RuntimeError(f"the last child run failed (exit {child.returncode})")
    final = verify_in_child(data / "store", log_path, 0)
    return summarise(verdicts, final, memories, kills, seed, hours, time.perf_counter() - started)


def summarise(verdicts: list[Verdict], final: Verdict, memories: int, kills: int, seed: int, hours: int,
              seconds: float) -> dict[str, Any]:
    drift_seen: dict[str, int] = {}
    for v in verdicts:
        for kind, n in v.drift.items():
            drift_seen[kind] = drift_seen.get(kind, 0) + n
    return {
        "memories_target": memories, "kills": kills, "seed": seed, "village_hours": hours,
        "final_memories_in_d1": final.memories_in_d1, "final_acked": final.acked, "final_vectors": final.vectors,
        "final_due": final.due,
        "lost": sum(v.lost for v in verdicts) + final.lost,
        "duplicates": sum(v.duplicated for v in verdicts) + final.duplicated,
        "missing_after_retry": sum(v.missing_after_retry for v in verdicts) + final.missing_after_retry,
        "pending_after_retry": sum(v.pending_after_retry for v in verdicts) + final.pending_after_retry,
        "drift_after_retry": drift_seen, "kills_with_drift": sum(1 for v in verdicts if v.drift),
        "all_clean_after_repair": all(v.clean_after for v in verdicts) and final.clean_after and not final.drift,
        "retried_after_kills": sum(v.retried for v in verdicts),
        "seconds": round(seconds, 1), "verdicts": [asdict(v) for v in verdicts] + [asdict(final)],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode")
    child = sub.add_parser("child")
    for name, kind in (("--data", Path), ("--log", Path), ("--hours", int), ("--seed", int), ("--npcs", int)):
        child.add_argument(name, type=kind, required=True)
    checker = sub.add_parser("verify")
    for name, kind in (("--data", Path), ("--log", Path), ("--kill", int)):
        checker.add_argument(name, type=kind, required=True)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--jitter", type=float, default=0.5, help="seconds of seeded delay after each kill point")
    parser.add_argument("--verb-kills", type=int, default=0, help="kills during each of demo, run, reembed, consolidate")
    parser.add_argument("--work", type=Path, default=Path("/tmp/memory-sim-crash-trials"))
    parser.add_argument("--out", type=Path, help="write the summary JSON here (merged under 'crash_trials')")
    args = parser.parse_args(argv)
    if args.mode == "child":
        run_child(args.data, args.log, args.hours, args.seed, args.npcs)
        return 0
    if args.mode == "verify":
        print(json.dumps(asdict(verify(args.data, args.log, args.kill))))
        return 0
    import shutil

    shutil.rmtree(args.work, ignore_errors=True)
    results: dict[str, dict[str, Any]] = {}
    if args.kills:
        results["crash_trials"] = run_trials(args.work / "village", memories=args.memories, kills=args.kills,
                                             seed=args.seed, jitter_s=args.jitter, progress=True)
        print(json.dumps({k: v for k, v in results["crash_trials"].items() if k != "verdicts"}, indent=2))
    if args.verb_kills:
        from crash_verbs import run_verb_trials

        results["crash_trials_verbs"] = run_verb_trials(args.work / "verbs", kills_per_verb=args.verb_kills,
                                                        seed=args.seed, progress=True)
        print(json.dumps({k: v for k, v in results["crash_trials_verbs"].items() if k != "trials_detail"}, indent=2))
    if args.out:
        merged = json.loads(args.out.read_text()) if args.out.exists() else {}
        merged.update(results)
        args.out.write_text(json.dumps(merged, indent=2) + "\n")
    return 0 if all(_passed(r) for r in results.values()) else 1


def _passed(result: dict[str, Any]) -> bool:
    if "verdicts" in result:  # the village trials
        return result["lost"] == 0 and result["pending_after_retry"] == 0 and result["all_clean_after_repair"]
    return result["acknowledged_lost"] == result["pending_after_next_start"] == result["manual_steps"] == 0


if __name__ == "__main__":
    sys.exit(main())
