"""Runs the village hour by hour on the sim clock: memories into the memory system, world state into D1,
diaries at the end of each day, and the jobs on schedule (scheduling.SimScheduler)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field

from memory_sim.bindings.d1 import D1Database, D1PreparedStatement
from memory_sim.memory.ledger import store
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


def save_day(
    db: D1Database, village: Village, places: dict[str, str], day: int,
    saved: dict[tuple[str, str], float] | None = None,
) -> None:
    """At the end of a day: where each NPC last was, and how they feel about each other. Only the pairs whose
    affinity differs from `saved` (the last day saved; updated here; None: every pair) are written, to
    relationships (`updated_day`: the day it last changed) and relationship_history: a pair's row already holds
    an unchanged one, and each upserted row costs the DuckDB engine."""
    pairs = sorted(village.affinity.items())
    changed = pairs if saved is None else [(pair, a) for pair, a in pairs if saved.get(pair) != a]
    if saved is not None:
        saved.update(changed)
    db.batch(place_rows(db, sorted(places.items()), day) + relationship_rows(db, changed, day)
             + history_rows(db, changed, day))


def place_rows(db: D1Database, places: list[tuple[str, str]], day: int) -> list[D1PreparedStatement]:
    """Where each NPC is, 32 NPCs a statement: a CASE maps id to place (3 parameters an NPC, under D1's 100)."""
    statements = []
    for start in range(0, len(places), 32):
        chunk = places[start : start + 32]
        cases = " ".join("WHEN ? THEN ?" for _ in chunk)
        marks = ", ".join("?" for _ in chunk)
        values = [v for pair in chunk for v in pair] + [day] + [npc for npc, _ in chunk]
        sql = f"UPDATE npc_state SET place = CASE npc_id {cases} END, updated_day = ? WHERE npc_id IN ({marks})"
        statements.append(db.prepare(sql).bind(*values))
    return statements


def history_rows(
    db: D1Database, pairs: list[tuple[tuple[str, str], float]], day: int
) -> list[D1PreparedStatement]:
    statements = []
    for start in range(0, len(pairs), 24):
        chunk = pairs[start : start + 24]
        values = [v for (a, b), affinity in chunk for v in (a, b, day, affinity)]
        statements.append(
            db.prepare(
                "INSERT INTO relationship_history (npc_id, other_id, day, affinity) VALUES "
                + ", ".join("(?, ?, ?, ?)" for _ in chunk)
                + " ON CONFLICT (npc_id, other_id, day) DO UPDATE SET affinity = excluded.affinity"
            ).bind(*values)
        )
    return statements


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
    jobs: all of the memory system's by default). Each hour's important memories are embedded in the
    background while the loop goes on (`remember_many(wait=False)`); the system's own methods wait for that
    work, and so does the return. `on_hour` reading the index directly, not through the system, should call
    `system.settle()` first."""
    db, scheduler = system.env.DB, scheduler or SimScheduler(system)
    save_npcs(db, village)
    summary, places = RunSummary(days), {}
    saved: dict[tuple[str, str], float] = {}
    start = clock.now.hours
    try:
        for hours in range(start, start + days * HOURS_PER_DAY):
            when = WorldTime.from_hours(hours)
            clock.advance_to(when)
            summary.reports += scheduler.tick(clock())
            tick = village.tick(when)
            system.remember_many(tick.memories, wait=False)  # embeds behind the next hours' D1 writes
            save_tick(db, tick)
            places.update(tick.locations)
            summary.memories += len(tick.memories)
            summary.events += len(tick.events)
            if when.hour == DIARY_HOUR:
                summary.diaries += len(system.write_diaries([n.id for n in village.npcs], when.day))
                save_day(db, village, places, when.day, saved)
            if on_hour is not None:
                on_hour(when)
    except BaseException:
        with suppress(Exception):  # the first failure is the one to report
            system.settle()
        raise
    system.settle()
    store.set_meta(db, "world_seconds", repr(clock()))
    return summary
