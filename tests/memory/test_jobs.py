"""Consolidation, decay and pruning over simulated months, and the schedulers' run-once bookkeeping."""

from __future__ import annotations

from memory_sim.env import Env
from memory_sim.memory.ledger import store
from memory_sim.memory.models import MemoryConfig, ShortTermMemory, WorldTime
from memory_sim.memory.system import MemorySystem
from memory_sim.scheduling import JobSpec, SimScheduler, run_if_due
from memory_sim.sim.clock import SimClock

DAY = 86400.0


def mem(text: str, importance: float, day: int, npc: str = "margaret") -> ShortTermMemory:
    return ShortTermMemory(npc, text, importance, WorldTime(day, 10))


def test_consolidation_condenses_old_diaries_once(system: MemorySystem, env: Env, clock: SimClock) -> None:
    system.remember(mem("The blacksmith mended my oven door for nothing.", 0.9, 1))
    system.remember(mem("I thanked the blacksmith for the oven door.", 0.6, 1))
    system.remember(mem("Rain on the market.", 0.1, 1))
    system.write_diary("margaret", 1)
    clock.advance_to(WorldTime(1, 23))
    assert system.consolidate().consolidated == 0  # not old enough yet
    clock.advance_to(WorldTime(2, 6))
    report = system.consolidate()
    assert report.details == ["summary-margaret-1"]
    [summary] = [m for m in store.all_memories(env.DB) if m.kind == "summary"]
    assert summary.content == "The blacksmith mended my oven door for nothing. I thanked the blacksmith for the oven door."
    assert summary.index_state == "indexed"
    vectors_before = env.VECTORIZE.describe().vector_count
    assert system.consolidate().consolidated == 0  # idempotent: once each
    clock.advance_to(WorldTime(9, 0))
    assert system.consolidate().consolidated == 0
    assert env.VECTORIZE.describe().vector_count == vectors_before
    assert system.stats()["consolidations"] == 1


def test_decay_and_prune_over_three_months(env: Env, clock: SimClock) -> None:
    system = MemorySystem(env, clock=clock, config=MemoryConfig())
    system.remember(mem("A fire at the forge; I carried buckets all night.", 0.95, 0))
    system.remember(mem("The blacksmith waved at me.", 0.75, 0))
    system.remember(mem("The bread rose nicely.", 0.3, 0))
    scheduler = SimScheduler(system)
    states: dict[str, list[str]] = {"fire": [], "wave": []}
    factors = []
    for day in range(90):  # one scheduler tick a day: every job's period comes round (hourly ticks add nothing here)
        clock.advance_to(WorldTime(day, 0))
        scheduler.tick(clock())
        rows = {m.content[:6]: m for m in store.all_memories(env.DB)}
        states["fire"].append(rows["A fire"].index_state)
        states["wave"].append(rows["The bl"].index_state)
        factors.append(rows["The br"].decay_factor)
    # The unimportant indexed memory fades out of the index (and stays in D1)...
    assert states["wave"][0] == "indexed" and states["wave"][-1] == "unindexed"
    assert store.count_memories(env.DB) == 3
    # ...the important one is re-embedded each time it fades, so it is never dropped.
    assert set(states["fire"]) == {"indexed"}
    counters = system.stats()
    assert counters["reembeds"] == 1 and counters["prunes"] == 1  # 0.95 fades past 0.9 in ~74 days
    # Decay factors grow once per day, and never past 1.
    assert factors == sorted(factors) and factors[-1] == 1.0 and factors[1] > factors[0]
    assert [r.text for r in system.recall("margaret", "The blacksmith waved at me.")][0] != "The blacksmith waved at me."


def test_decay_twice_on_the_same_day_changes_nothing(system: MemorySystem, env: Env, clock: SimClock) -> None:
    system.remember(mem("The blacksmith waved at me.", 0.75, 0))
    clock.advance_to(WorldTime(5, 0))
    assert system.decay_and_prune().decayed == 1
    before = store.all_memories(env.DB)
    assert system.decay_and_prune().decayed == 0
    assert store.all_memories(env.DB) == before


def test_run_if_due_runs_once_per_period_and_survives_restart(env: Env, clock: SimClock) -> None:
    calls: list[float] = []
    system = MemorySystem(env, clock=clock)
    job = JobSpec("probe", 6 * 3600.0, lambda now: calls.append(now) or system.retry_pending(now))  # type: ignore[func-returns-value]
    assert run_if_due(system, job, 0.0) is not None
    assert run_if_due(system, job, 3600.0) is None  # same 6-hour period
    restarted = MemorySystem(env, clock=clock)  # a new process on the same D1
    assert run_if_due(restarted, job, 5 * 3600.0) is None
    assert run_if_due(restarted, job, 6 * 3600.0) is not None
    assert calls == [0.0, 6 * 3600.0]


def test_schema_migrations_are_versioned_and_rerunnable(env: Env, clock: SimClock) -> None:
    from memory_sim.memory.ledger.schema import SCHEMA_VERSION, migrate

    MemorySystem(env, clock=clock)
    assert migrate(env.DB) == SCHEMA_VERSION
    rows = env.DB.prepare("SELECT version FROM schema_version ORDER BY version").all().results
    assert [r["version"] for r in rows] == list(range(1, SCHEMA_VERSION + 1))


def test_decay_prunes_an_index_over_its_cap_lowest_value_first(env: Env, clock: SimClock) -> None:
    roomy = MemorySystem(env, clock=clock, config=MemoryConfig(index_cap=100))
    for day, importance in [(0, 0.71), (1, 0.95), (2, 0.72), (3, 0.9), (4, 0.91)]:
        roomy.remember(mem(f"memory of day {day} worth {importance}", importance, day))
    clock.advance_to(WorldTime(5, 0))
    capped = MemorySystem(env, clock=clock, config=MemoryConfig(index_cap=3, cap_headroom=1.0))
    report = capped.decay_and_prune()
    states = {m.content: m.index_state for m in store.all_memories(env.DB)}
    assert report.unindexed == 2 and capped.stats()["cap_prunes"] == 2
    assert states["memory of day 0 worth 0.71"] == states["memory of day 2 worth 0.72"] == "unindexed"
    assert env.VECTORIZE.describe().vector_count == 3
    assert MemorySystem(env, clock=clock, config=MemoryConfig(index_cap=3)).decay_and_prune().unindexed == 0


def test_a_decay_pass_reads_only_the_columns_its_plan_needs_and_plans_alike(env: Env, clock: SimClock) -> None:
    from memory_sim.memory.scoring import plan_decay

    system = MemorySystem(env, clock=clock, config=MemoryConfig())
    for day in range(40):
        system.remember_many([mem(f"Day {day}, chore {k}.", (day * 7 + k * 3) % 10 / 10, day) for k in range(3)])
        clock.advance_to(WorldTime(day, 23))
        system.decay_and_prune()
    today = 41
    narrow, indexed = store.decaying(env.DB, today)
    full = [m for m in store.all_memories(env.DB)
            if m.decayed_day < today and (m.decay_factor < 1.0 or m.index_state == "indexed")]
    assert [r.id for r in narrow] == [m.id for m in full] and len(full) > 40
    assert plan_decay(narrow, today, system.config) == plan_decay(full, today, system.config)
    assert indexed == store.count_memories(env.DB, "index_state = 'indexed'") > 0
    assert store.decaying(env.DB, 0) == ([], None)  # nothing to decay: no row carries the count
