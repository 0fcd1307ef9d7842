"""One run of the seeded village (memory_sim/sim): hour by hour on the sim clock with the jobs on the run's
periods, and at the end of every sim day the counts and the village's probe questions, their gold memories
chosen by rule from D1 as `memory-sim eval village` does (eval/village.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from memory_sim.eval.quality import lineage, npc_texts
from memory_sim.eval.village import VillageQuestion, expected_ids, load_questions
from memory_sim.experiments.probes import DayRecord, Probe, Timer, ask_all, counts, sizes
from memory_sim.experiments.spec import RunConfig
from memory_sim.memory.system import MemorySystem
from memory_sim.scheduling import HOUR_S, JobSpec, SimScheduler

OnDay = Callable[[int], None]  # called with each sim day once it is recorded


def memory_jobs(system: MemorySystem, config: RunConfig) -> list[JobSpec]:
    """The memory system's jobs (scheduling.memory_jobs), on the run's periods."""
    return [
        JobSpec("retry_pending", config.retry_hours * HOUR_S, system.retry_pending),
        JobSpec("decay_and_prune", config.decay_hours * HOUR_S, system.decay_and_prune),
        JobSpec("consolidate", config.consolidation_hours * HOUR_S, system.consolidate),
    ]


@contextmanager
def open_system(data: Path, config: RunConfig, clock: Callable[[], float]) -> Iterator[MemorySystem]:
    """A fresh local Env in the run's own folder, set by the spec alone (no environment, no owner server)."""
    from memory_sim.env import Env

    with Env.local(
        data, environ={}, embed_model=config.model, d1_engine=config.d1_engine, vector_backend="chroma",
        embed_runtime="onnx", embed_threads=1, serve_owner=False,
    ) as env:
        yield MemorySystem(env, clock=clock, config=config.memory)


def village_probes(system: MemorySystem, questions: tuple[VillageQuestion, ...], npcs: set[str]) -> list[Probe]:
    """The shipped questions between the village's NPCs whose rule matches something today."""
    sources = lineage(system.env.DB)
    probes = []
    for q in questions:
        if q.npc not in npcs or q.about not in npcs:
            continue
        expected = expected_ids(system.env.DB, q)
        if expected:
            texts = npc_texts(system.env.DB, q.npc, sources)
            probes.append(Probe(f"{q.npc}:{q.type}:{q.about}", q.npc, q.query, q.type, frozenset(expected),
                                texts.covered))
    return probes


def warm_up(system: MemorySystem, probes: list[Probe], config: RunConfig) -> None:
    """Each probe asked once, untimed: the query's embedding and hybrid recall's per-NPC state are then ready for
    both methods alike, so latency compares recall with recall, not a first embedding with a cache hit."""
    for probe in probes:
        system.recall(probe.npc, probe.query, top_k=config.top_k, mode=config.recall_mode)


def run_village(
    data: Path, config: RunConfig, seed: int, on_day: OnDay, timer: Timer
) -> list[DayRecord]:
    from memory_sim.sim.clock import SimClock
    from memory_sim.sim.driver import run_village as drive
    from memory_sim.sim.world import Village

    questions = load_questions().questions
    clock, records = SimClock(), []
    with open_system(data, config, clock) as system:
        village = Village(config.npcs, seed)
        npcs = {n.id for n in village.npcs}
        scheduler = SimScheduler(system, memory_jobs(system, config))
        for day in range(config.days):
            started = timer()
            drive(system, village, clock, 1, scheduler=scheduler)
            record = DayRecord(day, counts(system))
            probes = village_probes(system, questions, npcs)
            warm_up(system, probes, config)
            ask_all(system, probes, record, config.recall_mode, config.top_k, day, timer, scoring=config.scoring)
            record.sizes, record.day_s = sizes(data), timer() - started
            records.append(record)
            on_day(day)
    return records
