"""Last access for weighted recall's presets (memory/recalling/presets.py): when each memory happened and when weighted
recall last returned it, read from and written to D1 (`short_term_memories.recalled_hour`, game hours)."""

from __future__ import annotations

from collections.abc import Sequence

from memory_sim.bindings.d1 import D1Database, D1PreparedStatement
from memory_sim.bindings.limits import D1_MAX_BOUND_PARAMETERS
from memory_sim.memory.models import Recollection
from memory_sim.memory.recalling.presets import Moment, Scoring, needs_moments, preset_scores
from memory_sim.memory.rules import HOURS_PER_DAY

_CHUNK = D1_MAX_BOUND_PARAMETERS - 10  # room for the statement's other parameters


def moments(db: D1Database, ids: Sequence[str]) -> dict[str, Moment]:
    out: dict[str, Moment] = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        marks = ", ".join("?" for _ in chunk)
        sql = f"SELECT id, day, hour, recalled_hour FROM short_term_memories WHERE id IN ({marks})"
        for row in db.prepare(sql).bind(*chunk).all().results:
            recalled = row["recalled_hour"]
            out[row["id"]] = Moment(int(row["day"]) * HOURS_PER_DAY + int(row["hour"]),
                                    None if recalled is None else int(recalled))
    return out


def record(db: D1Database, ids: Sequence[str], now_hours: int) -> list[D1PreparedStatement]:
    """Statements marking the memories as recalled at `now_hours` (for one batch)."""
    statements = []
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        marks = ", ".join("?" for _ in chunk)
        sql = f"UPDATE short_term_memories SET recalled_hour = ? WHERE id IN ({marks})"
        statements.append(db.prepare(sql).bind(int(now_hours), *chunk))
    return statements


def scored(
    db: D1Database, scoring: Scoring, found: Sequence[Recollection], current_day: int, now_hours: int
) -> list[float]:
    """The preset's scores for the candidates; D1 is read only for a preset that needs hours or last access."""
    known = moments(db, [r.id for r in found]) if needs_moments(scoring) else {}
    return preset_scores(scoring, found, current_day, now_hours, known)


def snapshot(db: D1Database) -> dict[str, int]:
    """Every recorded last access (an evaluation puts them back between presets, so none sees another's)."""
    sql = "SELECT id, recalled_hour FROM short_term_memories WHERE recalled_hour IS NOT NULL"
    return {r["id"]: int(r["recalled_hour"]) for r in db.prepare(sql).all().results}


def restore(db: D1Database, recorded: dict[str, int]) -> None:
    statements = [db.prepare("UPDATE short_term_memories SET recalled_hour = NULL WHERE recalled_hour IS NOT NULL")]
    by_hour: dict[int, list[str]] = {}
    for memory_id, hour in recorded.items():
        by_hour.setdefault(hour, []).append(memory_id)
    for hour, ids in sorted(by_hour.items()):
        statements += record(db, ids, hour)
    db.batch(statements)
