"""Runs the village hour by hour on the sim clock: memories into the memory system, world state into D1,
diaries at the end of each day, and the jobs on schedule (scheduling.SimScheduler)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memory_sim.bindings.d1 import D1Database, D1PreparedStatement
from memory_sim.memory import store
from memory_sim.memory.models import JobReport, WorldTime
from memory_sim.memory.rules import HOURS_PER_DAY
from memory_sim.memory.system import MemorySystem
from memory_sim.scheduling import SimScheduler
from memory_sim.sim.clock import SimClock
from memory_sim.sim.world import Tick, Village

DIARY_HOUR = 23


@dataclass
class RunSummary:
    days: int
    memories: int = 0
    events: int = 0
    diaries: int = 0
    reports: list[JobReport] = field(default_factory=list)


def save_npcs(db: D1Database, village: Village) -> None:
    """Registers the village's NPCs (memory/npcs.py, as MemorySystem.register_npc does); existing rows stay."""
    from memory_sim.memory import npcs

    npcs.register_many(db, [npcs.make(n.id, n.name, n.role, (), n.descriptors) for n in village.npcs])


def save_tick(db: D1Database, tick: Tick) -> None:
    """The hour's world events."""
    statements = [
        db.prepare(
            "INSERT INTO world_events (id, day, hour, place, text, importance) VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO NOTHING"
        ).bind(e.id, e.when.day, e.when.hour, e.place, e.text, e.importance)
        for e in tick.events
    ]
    if statements:
        db.batch(statements)


def save_day(db: D1Database, village: Village, places: dict[str, str], day: int) -> None:
    """At the end of a day: where each NPC last was, and how they feel about each other."""
    db.batch(
        [
            db.prepare("UPDATE npc_state SET place = ?, updated_day = ? WHERE npc_id = ?").bind(place, day, npc)
            for npc, place in sorted(places.items())
        ]
        + relationship_rows(db, sorted(village.affinity.items()), day)
    )


def relationship_rows(
    db: D1Database, pairs: list[tuple[tuple[str, str], float]], day: int
) -> list[D1PreparedStatement]:
    statements = []
    for start in range(0, len(pairs), 24):  # 4 parameters a row, under D1's 100
        chunk = pairs[start : start + 24]
        values = [v for (a, b), affinity in chunk for v in (a, b, affinity, day)]
        statements.append(
            db.prepare(
                "INSERT INTO relationships (npc_id, other_id, affinity, updated_day) VALUES "
                + ", ".join("(?, ?, ?, ?)" for _ in chunk)
                + " ON CONFLICT (npc_id, other_id) DO UPDATE SET affinity = excluded.affinity,"
                " updated_day = excluded.updated_day"
            ).bind(*values)
        )
    return statements


def run_village(
    system: MemorySystem,
    village: Village,
    clock: SimClock,
    days: int,
    on_hour: Callable[[WorldTime], None] | None = None,
    scheduler: SimScheduler | None = None,
) -> RunSummary:
    """Runs `days` whole days from the clock's current hour; jobs run as their periods come (`scheduler`'s
    jobs: all of the memory system's by default)."""
    db, scheduler = system.env.DB, scheduler or SimScheduler(system)
    save_npcs(db, village)
    summary, places = RunSummary(days), {}
    start = clock.now.hours
    for hours in range(start, start + days * HOURS_PER_DAY):
        when = WorldTime.from_hours(hours)
        clock.advance_to(when)
        summary.reports += scheduler.tick(clock())
        tick = village.tick(when)
        system.remember_many(tick.memories)
        save_tick(db, tick)
        places.update(tick.locations)
        summary.memories += len(tick.memories)
        summary.events += len(tick.events)
        if when.hour == DIARY_HOUR:
            summary.diaries += sum(1 for n in village.npcs if system.write_diary(n.id, when.day))
            save_day(db, village, places, when.day)
        if on_hour is not None:
            on_hour(when)
    store.set_meta(db, "world_seconds", repr(clock()))
    return summary
