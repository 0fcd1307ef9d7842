"""`memory-sim bench --scale`: a world of many NPCs lived hour by hour for a sim year on the default local stack
(Chroma, D1 on DuckDB, the local model), with the scheduled jobs; resumable.

    report = run_scale(Path("scale-run"), npcs=100, days=365, budget_s=600)   # again later: it goes on

The village's cast is ten NPCs, so a world of N NPCs is N/10 hamlets, each a seeded village of its own (seed,
seed + 1, ...), their NPCs told apart by a suffix ("margaret-3"). The run folder holds the data folder and
`scale.json` (what is done, the hamlets' random state, the figures so far), saved after each sim day: a run
killed mid-day goes on from the start of that day (its memories have the same ids and are kept once).

Figures: memories/s through the whole loop (remember, index, diaries, jobs; not the process start), D1
statements per memory, vectors, D1 and index size on disk, peak RSS, hybrid recall p50 at the end, and the time
of each job (consolidation, decay and prune, retry).
"""

from __future__ import annotations

import json
import os
import random
import resource
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from memory_sim.errors import ConfigError
from memory_sim.memory.models import JobReport, ShortTermMemory, WorldTime
from memory_sim.memory.rules import HOURS_PER_DAY
from memory_sim.sim.opinions import Feeling

HAMLET = 10  # NPCs of one village (the cast in sim/data/npcs.json)
STATE = "scale.json"
DIARY_HOUR = 23
RECALLS = 100  # hybrid recalls timed at the end
Progress = Callable[[str], None]


@dataclass
class ScaleState:
    """A run's progress and figures so far (`scale.json`)."""

    npcs: int
    days: int
    seed: int
    done_days: int = 0
    memories: int = 0
    loop_s: float = 0.0
    forward_s: float = 0.0  # of loop_s, in the model (tokenise, forward, pool): the floor
    cpu_s: float = 0.0  # the process's CPU time in the loop: steadier than loop_s on a shared machine
    d1_statements: int = 0
    d1_round_trips: int = 0
    jobs: dict[str, list[float]] = field(default_factory=dict)  # job -> [runs, seconds]
    peak_rss_mb: float = 0.0
    log: list[list[float]] = field(default_factory=list)  # [day, memories, loop s, CPU s] so far, after each day
    hamlets: list[dict[str, Any]] = field(default_factory=list)  # each village's random state and affinities

    def save(self, folder: Path) -> None:
        temporary = folder / f"{STATE}.tmp"
        temporary.write_text(json.dumps(asdict(self)) + "\n", "utf-8")
        os.replace(temporary, folder / STATE)  # a kill leaves the old state or the new one, never half of one


class World:
    """`npcs // 10` seeded villages lived side by side; memories carry the NPC's hamlet in its id."""

    def __init__(self, npcs: int, seed: int) -> None:
        from memory_sim.sim.world import Village

        if npcs < HAMLET or npcs % HAMLET:
            raise ConfigError(f"--npcs must be a multiple of {HAMLET} (hamlets of {HAMLET} NPCs), got {npcs}")
        self.hamlets = [Village(HAMLET, seed + k) for k in range(npcs // HAMLET)]

    def npc_ids(self) -> list[str]:
        return [f"{n.id}-{k}" for k, v in enumerate(self.hamlets) for n in v.npcs]

    def tick(self, when: WorldTime) -> list[ShortTermMemory]:
        return [_moved(m, k) for k, v in enumerate(self.hamlets) for m in v.tick(when).memories]

    def state(self) -> list[dict[str, Any]]:
        return [{"rng": v.rng.getstate(), "affinity": [[a, b, f.affinity, f.view] for (a, b), f in v.feelings.items()]}
                for v in self.hamlets]

    def restore(self, saved: list[dict[str, Any]]) -> None:
        for village, s in zip(self.hamlets, saved, strict=True):
            version, internal, gauss = s["rng"]
            village.rng.setstate((version, tuple(internal), gauss))
            village.feelings = {(row[0], row[1]): _feeling(row) for row in s["affinity"]}


def _feeling(row: list[Any]) -> Feeling:
    """[a, b, affinity, view]; a state saved before views were kept has no view: the affinity's sign is taken."""
    return Feeling(row[2], row[3]) if len(row) > 3 else Feeling.starting_at(row[2])


def _moved(memory: ShortTermMemory, hamlet: int) -> ShortTermMemory:
    return replace(memory, npc_id=f"{memory.npc_id}-{hamlet}", about=tuple(f"{a}-{hamlet}" for a in memory.about),
                   id="")


def load_state(folder: Path, npcs: int, days: int, seed: int) -> ScaleState:
    path = folder / STATE
    if not path.exists():
        if folder.exists() and any(folder.iterdir()):
            raise ConfigError(f"{folder} is not a scale run (no {STATE}); pass an empty or new folder with --run")
        return ScaleState(npcs, days, seed)
    state = ScaleState(**json.loads(path.read_text("utf-8")))
    if (state.npcs, state.seed) != (npcs, seed):
        raise ConfigError(f"{folder} holds a run of {state.npcs} NPCs (seed {state.seed}); "
                          f"pass another --run for {npcs} NPCs (seed {seed})")
    state.days = days  # a run may be taken further than first planned
    return state


def run_scale(
    folder: Path, *, npcs: int = 100, days: int = 365, seed: int = 7, budget_s: float | None = None,
    progress: Progress = lambda _: None, **env_options: Any,
) -> dict[str, Any]:
    """Lives the world from where the run folder stands until `days` are done or `budget_s` (seconds of loop)
    is spent; returns the report (`complete` says whether the year is done)."""
    from memory_sim.bench.d1_count import CountingD1
    from memory_sim.env import Env
    from memory_sim.memory.system import MemorySystem
    from memory_sim.scheduling import SimScheduler, memory_jobs
    from memory_sim.sim.clock import SimClock

    folder.mkdir(parents=True, exist_ok=True)
    state = load_state(folder, npcs, days, seed)
    world = World(npcs, seed)
    if state.hamlets:
        world.restore(state.hamlets)
    clock = SimClock(WorldTime(state.done_days, 0))
    options = {"serve_owner": False, **env_options}
    with Env.local(folder / "data", **options) as env:
        counted = CountingD1(env.DB)
        env.DB = counted
        system = MemorySystem(env, clock=clock)
        if state.done_days == 0:
            _register(system, world)
        jobs = [replace(j, run=_timed(state, j.name, j.run)) for j in memory_jobs(system, behind=True)]
        scheduler = SimScheduler(system, jobs)
        spent = 0.0
        while state.done_days < state.days and (budget_s is None or spent < budget_s):
            started, cpu = time.perf_counter(), time.process_time()
            before = (counted.statements, counted.round_trips)
            forward = _forward_s(env)
            remembered = _live_day(system, world, scheduler, clock, state.done_days)
            took = time.perf_counter() - started
            spent += took
            state.loop_s += took
            state.cpu_s += time.process_time() - cpu
            state.memories += remembered
            state.forward_s += _forward_s(env) - forward
            state.d1_statements += counted.statements - before[0]
            state.d1_round_trips += counted.round_trips - before[1]
            state.done_days += 1
            state.peak_rss_mb = max(state.peak_rss_mb, _rss_mb())
            state.log.append([state.done_days, state.memories, round(state.loop_s, 3), round(state.cpu_s, 3)])
            state.hamlets = world.state()
            state.save(folder)
            progress(f"day {state.done_days}/{state.days}: {state.memories:,} memories, "
                     f"{state.memories / max(state.loop_s, 1e-9):.0f} memories/s")
        report = _report(system, world, state)
    data = folder / "data"  # sizes once the files are closed (DuckDB checkpoints its log at close)
    report["d1_mb"], report["index_mb"] = round(_size_mb(data / "d1"), 1), round(_size_mb(data / "vectorize"), 1)
    return report


def _register(system: Any, world: World) -> None:
    from memory_sim.memory import npcs

    rows = [npcs.make(f"{n.id}-{k}", n.name, n.role, (), n.descriptors)
            for k, v in enumerate(world.hamlets) for n in v.npcs]
    npcs.register_many(system.env.DB, rows)


def _live_day(system: Any, world: World, scheduler: Any, clock: Any, day: int) -> int:
    """One sim day hour by hour, as the village driver lives it: jobs, memories, then diaries at night."""
    remembered = 0
    for hour in range(HOURS_PER_DAY):
        when = WorldTime(day, hour)
        clock.advance_to(when)
        scheduler.tick(clock())
        memories = world.tick(when)
        if hasattr(system, "settle"):
            system.remember_many(memories, wait=False)  # as run_village does: embedded behind the next hours
        else:  # the code before background indexing (for side-by-side runs)
            system.remember_many(memories)
        remembered += len(memories)
        if hour == DIARY_HOUR:
            ids = world.npc_ids()
            if hasattr(system, "write_diaries"):
                system.write_diaries(ids, day)
            else:  # the code before diaries were written together (for side-by-side runs)
                for npc_id in ids:
                    system.write_diary(npc_id, day)
    if hasattr(system, "settle"):
        system.settle()  # the day's indexing counts in the day's time
    return remembered


def _timed(state: ScaleState, name: str, run: Callable[[float], JobReport]) -> Callable[[float], JobReport]:
    def timed(now: float) -> JobReport:
        started = time.perf_counter()
        try:
            return run(now)
        finally:
            runs, seconds = state.jobs.get(name, [0, 0.0])
            state.jobs[name] = [runs + 1, seconds + time.perf_counter() - started]

    return timed


def _forward_s(env: Any) -> float:
    return float(getattr(env.AI, "seconds", {}).get("forward", 0.0))


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kilobytes on Linux


def _size_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20 if path.exists() else 0.0


def _recall_p50(system: Any, world: World, seed: int) -> dict[str, float]:
    from memory_sim.eval.metrics import latency_summary

    rng, ids = random.Random(seed), world.npc_ids()
    seconds = []
    for _ in range(RECALLS):
        npc, other = rng.sample(ids, 2)
        started = time.perf_counter()
        system.recall(npc, f"What do I think of {other.split('-')[0]}?", top_k=5)
        seconds.append(time.perf_counter() - started)
    return latency_summary(seconds)


def _report(system: Any, world: World, state: ScaleState) -> dict[str, Any]:
    from memory_sim.bench.suite import machine

    stats = system.stats()
    jobs = {name: {"runs": int(runs), "seconds": round(s, 2), "ms_per_run": round(1000 * s / max(runs, 1), 1)}
            for name, (runs, s) in sorted(state.jobs.items())}
    return {
        "machine": machine(), "npcs": state.npcs, "days_done": state.done_days, "days": state.days,
        "complete": state.done_days >= state.days, "memories": state.memories,
        "memories_per_s": round(state.memories / max(state.loop_s, 1e-9), 1), "loop_s": round(state.loop_s, 1),
        "memories_per_cpu_s": round(state.memories / max(state.cpu_s, 1e-9), 1), "cpu_s": round(state.cpu_s, 1),
        "model_forward_s": round(state.forward_s, 1),
        "d1_statements_per_memory": round(state.d1_statements / max(state.memories, 1), 2),
        "d1_round_trips_per_memory": round(state.d1_round_trips / max(state.memories, 1), 2),
        "vectors": stats.get("vectors"), "peak_rss_mb": round(max(state.peak_rss_mb, _rss_mb()), 1),
        "recall_at_end": _recall_p50(system, world, state.seed), "jobs": jobs, "log": state.log,
    }


def markdown(report: dict[str, Any]) -> str:
    r, jobs = report, report["jobs"]
    job_cells = "; ".join(f"{name} {j['runs']} runs, {j['ms_per_run']} ms each" for name, j in jobs.items())
    done = "complete" if r["complete"] else f"{r['days_done']} of {r['days']} days (resumable)"
    return "\n".join([
        f"# memory-sim bench --scale: {r['npcs']} NPCs, {done}", "",
        f"Machine: {r['machine']}.", "",
        "| memories | memories/s (per CPU s) | loop s (model forward s) | D1 statements / round trips a memory | "
        "vectors | D1 MB | index MB | peak RSS MB | hybrid recall p50 / p95 ms |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {r['memories']:,} | {r['memories_per_s']} ({r['memories_per_cpu_s']}) | "
        f"{r['loop_s']} ({r['model_forward_s']}) | "
        f"{r['d1_statements_per_memory']} / {r['d1_round_trips_per_memory']} | {r['vectors']:,} | {r['d1_mb']} | "
        f"{r['index_mb']} | {r['peak_rss_mb']} | {r['recall_at_end']['p50_ms']} / {r['recall_at_end']['p95_ms']} |",
        "", f"Jobs: {job_cells}.", "",
    ])
