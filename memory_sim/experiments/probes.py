"""What a run records: the memory's counts at the end of a sim day, recall quality per question for plain and
weighted recall, and what only the wall clock and the disk can say (latency, sizes), kept apart so the rest is
reproducible to the bit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_sim.eval.metrics import percentile
from memory_sim.memory.recalling.presets import Scoring
from memory_sim.memory.system import MemorySystem

METHODS = ("plain", "weighted")  # recall in the run's mode, and weighted_recall in the same mode
SCORES = ("precision_at_5", "recall_at_5", "recall_at_10", "hit_at_1")
COUNTS = ("memories", "indexed", "vectors", "pending", "consolidated", "pruned", "forgotten")
Timer = Callable[[], float]


@dataclass(frozen=True, slots=True)
class Probe:
    """One question with its gold memories: `covered(id)` is what a recalled id stands for (itself by default)."""

    id: str
    npc: str
    query: str
    category: str
    expected: frozenset[str]
    covered: Callable[[str], set[str]] = lambda memory_id: {memory_id}


@dataclass
class DayRecord:
    """A run's rows for one sim day (the store's tables, minus the run id)."""

    day: int
    counts: dict[str, int]
    questions: list[dict[str, Any]] = field(default_factory=list)
    seconds: dict[str, list[float]] = field(default_factory=dict)  # per method: each recall's latency
    sizes: dict[str, int] = field(default_factory=dict)
    day_s: float = 0.0

    def daily_row(self) -> dict[str, Any]:
        row: dict[str, Any] = {"day": self.day, **self.counts, "questions": len(self.questions) // len(METHODS)}
        for method in METHODS:
            mine = [q for q in self.questions if q["method"] == method]
            for score in SCORES:
                row[f"{method}_{score}"] = round(sum(q[score] for q in mine) / len(mine), 6) if mine else None
        return row

    def measurement_row(self) -> dict[str, Any]:
        latency = {f"{m}_p50_ms": round(percentile(self.seconds.get(m, []), 0.5) * 1000, 3) if self.seconds.get(m)
                   else None for m in METHODS}
        return {"day": self.day, **self.sizes, **latency, "day_s": round(self.day_s, 3)}


def counts(system: MemorySystem) -> dict[str, int]:
    """memories (D1 rows), indexed and vectors (D1's view and the index's own count), pending (outbox),
    consolidated (summaries), pruned (dropped from the index by decay or the cap, still in D1), forgotten (decayed
    to the forget threshold, in the index or not, plus deliberate forgets)."""
    db = system.env.DB

    def count(sql: str, *params: Any) -> int:
        return int(db.prepare(sql).bind(*params).first("n") or 0)

    stats = system.stats()
    return {
        "memories": stats["memories"],
        "indexed": stats["indexed"],
        "vectors": stats["vectors"],
        "pending": stats["pending"],
        "consolidated": stats["summaries"],
        "pruned": count("SELECT COUNT(*) AS n FROM short_term_memories WHERE index_state = 'unindexed'"),
        "forgotten": count("SELECT COUNT(*) AS n FROM short_term_memories WHERE decay_factor >= ?",
                           system.config.forget_threshold) + count("SELECT COUNT(*) AS n FROM forgotten"),
    }


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


def sizes(data: Path) -> dict[str, int]:
    """Bytes on disk of D1's files and the index's (Chroma and its state), as the folder holds them now."""
    return {"d1_bytes": folder_bytes(data / "d1"), "index_bytes": folder_bytes(data / "vectorize")}


def scores(ranked: Sequence[str], expected: Iterable[str], covered: Callable[[str], set[str]]) -> dict[str, float]:
    """precision@5 (share of the top 5 showing a gold memory), recall@5 and @10 (share of the gold shown),
    hit@1; a recalled id shows what `covered` says (a summary its sources)."""
    gold = set(expected)
    shown = [covered(i) for i in ranked[:10]]
    seen5, seen10 = set().union(*shown[:5]), set().union(*shown)
    return {
        "precision_at_5": sum(1 for ids in shown[:5] if ids & gold) / 5,
        "recall_at_5": len(gold & seen5) / len(gold),
        "recall_at_10": len(gold & seen10) / len(gold),
        "hit_at_1": float(bool(shown) and bool(shown[0] & gold)),
    }


def ask(
    system: MemorySystem, probe: Probe, method: str, mode: Any, top_k: int, today: int, scoring: Scoring = "design"
) -> list[str]:
    if method == "weighted":
        found = system.weighted_recall(probe.npc, probe.query, today, top_k=top_k, mode=mode, scoring=scoring)
        return [r.id for r in found]
    return [r.id for r in system.recall(probe.npc, probe.query, top_k=top_k, mode=mode)]


def ask_all(
    system: MemorySystem, probes: Sequence[Probe], record: DayRecord, mode: Any, top_k: int, today: int,
    timer: Timer = time.perf_counter, to_gold: Callable[[str, str], str] = lambda npc, memory_id: memory_id,
    scoring: Scoring = "design",
) -> None:
    """Every probe by both methods into `record` (weighted recall ranked by the `scoring` preset); `to_gold(npc,
    id)` maps a recalled id to the gold's naming."""
    for probe in probes:
        for method in METHODS:
            started = timer()
            ranked = [to_gold(probe.npc, i) for i in ask(system, probe, method, mode, top_k, today, scoring)]
            record.seconds.setdefault(method, []).append(timer() - started)
            record.questions.append({
                "question_id": probe.id, "npc_id": probe.npc, "category": probe.category, "method": method,
                "expected": len(probe.expected), **scores(ranked, probe.expected, probe.covered),
            })
