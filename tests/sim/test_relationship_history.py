"""The village records each pair's affinity over time: a relationship_history row on each day it changed, so
that the affinity on any past day can be read back (the inspector's relationship view)."""

from __future__ import annotations

from memory_env import build_env

from memory_sim.memory.system import MemorySystem
from memory_sim.sim.clock import SimClock
from memory_sim.sim.driver import run_village
from memory_sim.sim.world import Village


def test_history_holds_a_row_where_an_affinity_changed_and_replays_to_each_days_value() -> None:
    clock = SimClock()
    env = build_env(clock)
    system, village = MemorySystem(env, clock=clock), Village(6, 3)
    by_day = []
    run_village(system, village, clock, 4,
                on_hour=lambda when: by_day.append(dict(village.affinity)) if when.hour == 23 else None)
    rows = env.DB.prepare("SELECT npc_id, other_id, day, affinity FROM relationship_history").all().results
    assert len({(r["npc_id"], r["other_id"]) for r in rows if r["day"] == 0}) == 6 * 5  # every pair on day 0
    for day, affinities in enumerate(by_day):
        replayed = {}
        for r in sorted(rows, key=lambda r: r["day"]):
            if r["day"] <= day:
                replayed[(r["npc_id"], r["other_id"])] = r["affinity"]
        assert replayed == affinities, day
    changed = sum(1 for r in rows if r["day"] > 0)
    moved = sum(1 for d in range(1, len(by_day)) for pair in by_day[d] if by_day[d][pair] != by_day[d - 1][pair])
    assert changed == moved > 0  # only the pairs that moved that day
