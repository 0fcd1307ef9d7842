"""What the inspector shows, read from D1 (the ledger) in a few aggregate queries per page: no page reads every
memory of the village. Plain SQLite, so the same queries run on the local engines and through a folder's owner.
Only reads: nothing here writes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_sim.bindings.d1 import D1Database
from memory_sim.errors import D1Error, NotFound
from memory_sim.memory.ledger.counts import counts_by_npc
from memory_sim.memory.models import WorldTime

# How a memory is drawn: its kind and index state as one of the inspector's five states (or "short-term": in D1
# only, never important enough for the index).
STATES = ("pending", "indexed", "summary", "pruned", "forgotten", "short-term")


def state_of(index_state: str, kind: str) -> str:
    if index_state in ("forgetting", "forgotten"):
        return "forgotten"
    if index_state == "unindexed":
        return "pruned"
    if kind == "summary":
        return "summary"
    return {"pending": "pending", "indexed": "indexed"}.get(index_state, "short-term")


def tables(db: D1Database) -> set[str]:
    try:
        rows = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().results
    except D1Error:
        return set()
    return {str(r["name"]) for r in rows}


def rows(db: D1Database, sql: str, *values: Any) -> list[dict[str, Any]]:
    return list(db.prepare(sql).bind(*values).all().results)


def world_time(db: D1Database, have: set[str]) -> WorldTime:
    """The moment the folder's world has reached: the world's clock as every entry point reads it
    (`store.world_seconds`: the saved time, or the last job run), or the latest moment a memory or a forget
    recorded, if later."""
    from memory_sim.memory.ledger.store import world_seconds

    seconds = world_seconds(db) if {"meta", "job_runs"} <= have else 0.0
    if "forgotten" in have:
        last = db.prepare("SELECT MAX(forgotten_at) AS t FROM forgotten").first("t")
        seconds = max(seconds, float(last) if last is not None else 0.0)
    now = WorldTime.from_seconds(max(0.0, seconds))
    if "short_term_memories" in have:
        latest = rows(db, "SELECT day, hour FROM short_term_memories ORDER BY day DESC, hour DESC LIMIT 1")
        if latest:
            now = max(now, WorldTime(int(latest[0]["day"]), int(latest[0]["hour"])))
    return now


def world_day(db: D1Database, have: set[str]) -> int:
    """The day the folder's world has reached (`world_time`)."""
    return world_time(db, have).day


# --- the village --------------------------------------------------------------------------------------------


@dataclass
class NpcRow:
    id: str
    name: str
    role: str
    memories: int = 0  # remembered and not forgotten: the counts are memory/ledger/counts.py's, as `memory-sim stats`'s
    vectors: int = 0  # memories D1 records as in the vector index
    pending: int = 0  # memories waiting to be embedded (D1 says pending; a failed attempt also has an outbox row)
    summaries: int = 0
    forgotten: int = 0
    last_day: int | None = None
    per_day: dict[int, int] = field(default_factory=dict)


def village(db: D1Database, query: str = "") -> tuple[WorldTime, list[NpcRow]]:
    """(world time, every NPC with its counts), registered or only named by memories; `query` keeps those whose
    id or name contains it (case-insensitive)."""
    have = tables(db)
    if "short_term_memories" not in have:
        return world_time(db, have), []
    npcs: dict[str, NpcRow] = {}
    if "npc_state" in have:
        for r in rows(db, "SELECT npc_id, name, role FROM npc_state"):
            npcs[r["npc_id"]] = NpcRow(r["npc_id"], r["name"] or r["npc_id"], r["role"] or "")
    for npc_id, counts in counts_by_npc(db).items():
        npc = npcs.setdefault(npc_id, NpcRow(npc_id, npc_id, ""))
        npc.memories, npc.forgotten, npc.summaries = counts["memories"], counts["forgotten"], counts["summaries"]
        npc.vectors, npc.pending = counts["indexed"], counts["pending"]
    for r in rows(db, "SELECT npc_id, MAX(day) AS last_day FROM short_term_memories GROUP BY npc_id"):
        npcs[r["npc_id"]].last_day = int(r["last_day"])
    for r in rows(db, "SELECT npc_id, day, COUNT(*) AS n FROM short_term_memories GROUP BY npc_id, day"):
        npcs[r["npc_id"]].per_day[int(r["day"])] = int(r["n"])
    wanted = query.strip().casefold()
    found = [n for n in npcs.values() if not wanted or wanted in n.id.casefold() or wanted in n.name.casefold()]
    return world_time(db, have), sorted(found, key=lambda n: (n.name.casefold(), n.id))


# --- one NPC ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryDot:
    id: str
    day: int
    hour: int
    importance: float
    state: str
    type: str
    decay_factor: float
    text: str


@dataclass
class NpcDetail:
    id: str
    name: str
    role: str
    traits: str
    world_day: int
    memories: list[MemoryDot]
    consolidation_days: list[int]
    registered: bool


_MEMORY_COLUMNS = "id, day, hour, importance, index_state, kind, type, decay_factor, content"


def npc(db: D1Database, npc_id: str) -> NpcDetail:
    """The NPC's profile and every memory it has (forgotten ones too), in time order; NotFound when the folder
    has neither a registration nor a memory of it."""
    have = tables(db)
    profile = None
    if "npc_state" in have:
        found = rows(db, "SELECT name, role, traits FROM npc_state WHERE npc_id = ?", npc_id)
        profile = found[0] if found else None
    memories = [] if "short_term_memories" not in have else [
        MemoryDot(r["id"], int(r["day"]), int(r["hour"]), float(r["importance"]),
                  state_of(r["index_state"], r["kind"]), r["type"], float(r["decay_factor"]), r["content"])
        for r in rows(db, f"SELECT {_MEMORY_COLUMNS} FROM short_term_memories WHERE npc_id = ?"
                          " ORDER BY day, hour, id", npc_id)
    ]
    if profile is None and not memories:
        raise NotFound(f"no NPC {npc_id!r} in this folder (no registration, no memory)")
    days = [] if "diaries" not in have else [
        int(r["day"]) for r in rows(db, "SELECT day FROM diaries WHERE npc_id = ? AND summary_id IS NOT NULL"
                                        " ORDER BY day", npc_id)
    ]
    profile = profile or {}
    return NpcDetail(npc_id, profile.get("name") or npc_id, profile.get("role") or "", profile.get("traits") or "",
                     world_day(db, have), memories, days, bool(profile))


# --- one memory ---------------------------------------------------------------------------------------------


@dataclass
class MemoryRecord:
    row: dict[str, Any]  # the D1 row as stored
    state: str
    outbox: dict[str, Any] | None
    forgotten: dict[str, Any] | None
    sources: list[dict[str, Any]]  # a summary's: the memories it was made from
    summaries: list[dict[str, Any]]  # a source's: the summaries it went into


def memory(db: D1Database, memory_id: str) -> MemoryRecord:
    have = tables(db)
    found = rows(db, "SELECT * FROM short_term_memories WHERE id = ?", memory_id) if (
        "short_term_memories" in have) else []
    if not found:
        raise NotFound(f"no memory {memory_id!r} in this folder")
    row = found[0]

    def one(table: str, sql: str) -> dict[str, Any] | None:
        got = rows(db, sql, memory_id) if table in have else []
        return got[0] if got else None

    linked: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    if "memory_sources" in have:
        brief = ("SELECT m.id AS id, m.day AS day, m.hour AS hour, m.content AS content, m.index_state AS state"
                 " FROM memory_sources s")  # state: a forget shows what it reached (made again, or forgotten)
        linked = (rows(db, f"{brief} JOIN short_term_memories m ON m.id = s.source_id WHERE s.summary_id = ?"
                           " ORDER BY m.day, m.hour, m.id", memory_id),
                  rows(db, f"{brief} JOIN short_term_memories m ON m.id = s.summary_id WHERE s.source_id = ?"
                           " ORDER BY m.day, m.hour, m.id", memory_id))
    return MemoryRecord(
        row, state_of(row["index_state"], row["kind"]),
        one("embedding_outbox", "SELECT attempts, next_attempt_at, last_error FROM embedding_outbox"
                                " WHERE memory_id = ?"),
        one("forgotten", "SELECT reason, forgotten_at FROM forgotten WHERE memory_id = ?"),
        *linked,
    )


# --- relationships ------------------------------------------------------------------------------------------


@dataclass
class Affinities:
    day: int
    names: dict[str, str]
    edges: dict[tuple[str, str], float]  # (npc, other) -> how npc feels about other
    history: bool  # False: the folder kept no history; `edges` are the latest affinities


def names(db: D1Database, have: set[str]) -> dict[str, str]:
    if "npc_state" not in have:
        return {}
    return {r["npc_id"]: r["name"] or r["npc_id"] for r in rows(db, "SELECT npc_id, name FROM npc_state")}


def affinities(db: D1Database, day: int | None) -> Affinities:
    """Every pair's affinity as it stood at the end of `day` (default: the world's day)."""
    have = tables(db)
    at = world_day(db, have) if day is None else day
    edges: dict[tuple[str, str], float] = {}
    recorded = "relationship_history" in have and bool(rows(db, "SELECT 1 AS x FROM relationship_history LIMIT 1"))
    if recorded:
        latest = rows(db, "SELECT h.npc_id AS a, h.other_id AS b, h.affinity AS affinity FROM relationship_history h"
                          " JOIN (SELECT npc_id, other_id, MAX(day) AS day FROM relationship_history WHERE day <= ?"
                          " GROUP BY npc_id, other_id) l ON l.npc_id = h.npc_id AND l.other_id = h.other_id"
                          " AND l.day = h.day", at)
        edges = {(r["a"], r["b"]): float(r["affinity"]) for r in latest}
    elif "relationships" in have:
        edges = {(r["npc_id"], r["other_id"]): float(r["affinity"])
                 for r in rows(db, "SELECT npc_id, other_id, affinity FROM relationships")}
    return Affinities(at, names(db, have), edges, recorded)


@dataclass
class PairHistory:
    a: str
    b: str
    names: dict[str, str]
    a_to_b: list[tuple[int, float]]  # (day, affinity) where it changed
    b_to_a: list[tuple[int, float]]
    memories: list[dict[str, Any]]  # what each remembered about the other: the memories that moved it


def pair(db: D1Database, a: str, b: str) -> PairHistory:
    have = tables(db)

    def series(x: str, y: str) -> list[tuple[int, float]]:
        if "relationship_history" not in have:
            return []
        return [(int(r["day"]), float(r["affinity"])) for r in rows(
            db, "SELECT day, affinity FROM relationship_history WHERE npc_id = ? AND other_id = ? ORDER BY day", x, y)]

    moved: list[dict[str, Any]] = []
    if "short_term_memories" in have:
        for x, y in ((a, b), (b, a)):
            moved += [dict(r, about=y) for r in rows(
                db, "SELECT id, npc_id, day, hour, type, importance, content FROM short_term_memories"
                    " WHERE npc_id = ? AND kind = 'observation' AND type IN ('relationship', 'opinion')"
                    " AND (',' || about || ',') LIKE ?", x, f"%,{y},%")]
    moved.sort(key=lambda r: (int(r["day"]), int(r["hour"]), r["id"]))
    return PairHistory(a, b, names(db, have), series(a, b), series(b, a), moved)


# --- health -------------------------------------------------------------------------------------------------


@dataclass
class Health:
    world_time: WorldTime
    outbox_total: int
    outbox: list[dict[str, Any]]  # the first rows due, with their retry schedule
    jobs: list[dict[str, Any]]  # each job's last run
    counters: dict[str, int]
    consolidations: list[dict[str, Any]]  # per diary day: summaries made from it


def health(db: D1Database, outbox_limit: int = 100) -> Health:
    have = tables(db)
    outbox: list[dict[str, Any]] = []
    total = 0
    if "embedding_outbox" in have:
        total = int(db.prepare("SELECT COUNT(*) AS n FROM embedding_outbox").first("n") or 0)
        outbox = rows(db, "SELECT o.memory_id AS memory_id, m.npc_id AS npc_id, o.attempts AS attempts,"
                          " o.next_attempt_at AS next_attempt_at, o.last_error AS last_error FROM embedding_outbox o"
                          " LEFT JOIN short_term_memories m ON m.id = o.memory_id"
                          " ORDER BY o.next_attempt_at, o.memory_id LIMIT ?", outbox_limit)
    jobs = rows(db, "SELECT job, period, ran_at FROM job_runs ORDER BY job") if "job_runs" in have else []
    counters = {r["name"]: int(r["value"]) for r in rows(db, "SELECT name, value FROM counters ORDER BY name")} if (
        "counters" in have) else {}
    made = rows(db, "SELECT day, COUNT(*) AS npcs FROM diaries WHERE summary_id IS NOT NULL GROUP BY day"
                    " ORDER BY day DESC LIMIT 60") if "diaries" in have else []
    return Health(world_time(db, have), total, outbox, jobs, counters, made)


def when(seconds: float | None) -> str:
    """World seconds as the world's day and hour."""
    return "" if seconds is None else str(WorldTime.from_seconds(max(0.0, float(seconds))))


def job_periods(jobs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(j, ran=when(j["ran_at"])) for j in jobs]
