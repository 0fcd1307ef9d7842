"""The village's ground truth: "what does X think of Y?" answered by the memory system, against a naive
keyword scan of D1 (the seed's claim: semantic recall finds what a diary scan misses).

The questions ship with the package (eval/data/village_questions.json). Each names an NPC and a rule; the
expected memories are the ones D1 holds that match the rule (the NPC's memories of a `type` whose `about`
includes an NPC), found by a query after the seeded village has run, never hand-picked ids. Scores per
question: precision@k (share of the top k that match the rule), recall@10 (share of the expected found in the
top 10), hit@1.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_sim.bindings.d1 import D1Database
from memory_sim.eval.metrics import latency_summary, mean_scores
from memory_sim.memory.system import MemorySystem

METHODS: tuple[str, ...] = ("vector", "keyword", "hybrid", "weighted", "like-scan")
TOP_K = 10
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True, slots=True)
class VillageQuestion:
    npc: str
    query: str
    type: str  # the rule: memories of this type...
    about: str  # ...whose `about` includes this NPC


@dataclass(frozen=True, slots=True)
class QuestionSet:
    npcs: int
    seed: int
    days: int
    questions: tuple[VillageQuestion, ...]


def load_questions(path: str | Path | None = None) -> QuestionSet:
    """The question set in the JSON file at `path`; by default the one shipped with the package."""
    from importlib import resources

    packaged = resources.files("memory_sim.eval").joinpath("data", "village_questions.json")
    raw = json.loads((packaged if path is None else Path(path)).read_text(encoding="utf-8"))
    village = raw["village"]
    questions = tuple(
        VillageQuestion(q["npc"], q["query"], q["rule"]["type"], q["rule"]["about"]) for q in raw["questions"]
    )
    return QuestionSet(int(village["npcs"]), int(village["seed"]), int(village["days"]), questions)


def expected_ids(db: D1Database, question: VillageQuestion) -> set[str]:
    """The rule, as a D1 query: `about` is a comma-separated list of NPC ids."""
    rows = db.prepare(
        "SELECT id FROM short_term_memories WHERE npc_id = ? AND type = ? AND (',' || about || ',') LIKE ?"
    ).bind(question.npc, question.type, f"%,{question.about},%").all().results
    return {r["id"] for r in rows}


def scan_words(query: str) -> list[str]:
    from memory_sim.memory.keyword import STOPWORDS

    return list(dict.fromkeys(w for w in _WORD.findall(query.lower()) if len(w) > 2 and w not in STOPWORDS))


def like_scan(db: D1Database, npc_id: str, query: str, k: int = TOP_K) -> list[str]:
    """A naive diary scan: the NPC's memories containing any of the query's words (LIKE), most words first,
    newest first among equals."""
    words = scan_words(query)
    if not words:
        return []
    hits = " + ".join("(CASE WHEN content LIKE ? THEN 1 ELSE 0 END)" for _ in words)
    anywhere = " OR ".join("content LIKE ?" for _ in words)
    patterns = [f"%{w}%" for w in words]
    sql = (
        f"SELECT id, {hits} AS hits FROM short_term_memories WHERE npc_id = ? AND ({anywhere})"
        f" ORDER BY hits DESC, day DESC, hour DESC, id LIMIT {int(k)}"
    )
    return [r["id"] for r in db.prepare(sql).bind(*patterns, npc_id, *patterns).all().results]


def answer(system: MemorySystem, question: VillageQuestion, method: str) -> list[str]:
    if method == "like-scan":
        return like_scan(system.env.DB, question.npc, question.query)
    if method == "weighted":
        return [r.id for r in system.weighted_recall(question.npc, question.query, top_k=TOP_K)]
    return [r.id for r in system.recall(question.npc, question.query, top_k=TOP_K, mode=method)]  # type: ignore[arg-type]


def question_scores(ranked: Sequence[str], expected: set[str]) -> dict[str, float]:
    return {
        "precision@5": sum(1 for i in ranked[:5] if i in expected) / 5,
        "precision@10": sum(1 for i in ranked[:10] if i in expected) / 10,
        "recall@10": len(expected & set(ranked[:10])) / len(expected),
        "hit@1": float(bool(ranked[:1]) and ranked[0] in expected),
    }


def evaluate(
    system: MemorySystem,
    questions: Sequence[VillageQuestion],
    methods: Sequence[str] = METHODS,
    timer: Callable[[], float] = time.perf_counter,
) -> dict[str, Any]:
    """Every question by every method; questions whose rule matches nothing are skipped (and counted)."""
    rows: dict[str, list[dict[str, float]]] = {m: [] for m in methods}
    seconds: dict[str, list[float]] = {m: [] for m in methods}
    per_question = []
    for question in questions:
        expected = expected_ids(system.env.DB, question)
        if not expected:
            continue
        entry: dict[str, Any] = {"npc": question.npc, "query": question.query, "expected": len(expected)}
        for method in methods:
            started = timer()
            ranked = answer(system, question, method)
            seconds[method].append(timer() - started)
            scores = question_scores(ranked, expected)
            rows[method].append(scores)
            entry[method] = scores["precision@5"]
        per_question.append(entry)
    summary = {m: mean_scores(rows[m]) | {"latency": latency_summary(seconds[m])} for m in methods}
    return {"methods": summary, "questions": per_question, "skipped": len(questions) - len(per_question)}


def run_village_eval(
    question_set: QuestionSet,
    *,
    methods: Sequence[str] = METHODS,
    work_dir: Path | None = None,
    model: str = "sentence-transformers/all-MiniLM-L6-v2",
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Runs the seeded village on a fresh local Env (Chroma + DuckDB + the model), then asks the questions."""
    from memory_sim.env import Env
    from memory_sim.sim.clock import SimClock
    from memory_sim.sim.driver import run_village
    from memory_sim.sim.world import Village

    with tempfile.TemporaryDirectory(prefix="memory_sim_village_") as tmp:
        clock = SimClock()
        with Env.local(Path(work_dir or tmp) / "village-data", embed_model=model) as env:
            system = MemorySystem(env, clock=clock)
            progress(f"running the village: {question_set.npcs} NPCs, seed {question_set.seed}, "
                     f"{question_set.days} days")
            started = time.perf_counter()
            run_village(system, Village(question_set.npcs, question_set.seed), clock, question_set.days)
            run_s = time.perf_counter() - started
            progress(f"asking {len(question_set.questions)} questions x {len(methods)} methods")
            report = evaluate(system, question_set.questions, methods)
            stats = system.stats()
    report["meta"] = {
        "npcs": question_set.npcs, "seed": question_set.seed, "days": question_set.days, "model": model,
        "memories": stats["memories"], "vectors": stats["vectors"], "village_run_s": round(run_s, 1),
    }
    return report


def markdown(report: dict[str, Any], machine: str) -> str:
    meta = report["meta"]
    lines = [
        f"# Village ground truth: what NPCs think of each other ({len(report['questions'])} questions)",
        "",
        f"Machine: {machine}. Village: {meta['npcs']} NPCs, seed {meta['seed']}, {meta['days']} days; "
        f"{meta['memories']} memories in D1, {meta['vectors']} vectors. Model: {meta['model']}.",
        "Expected: the NPC's memories of type opinion whose `about` includes the other NPC (a D1 query).",
        "",
        "| method | precision@5 | precision@10 | recall@10 | hit@1 | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for method, s in report["methods"].items():
        lat = s["latency"]
        lines.append(f"| {method} | {s['precision@5']:.3f} | {s['precision@10']:.3f} | {s['recall@10']:.3f} | "
                     f"{s['hit@1']:.3f} | {lat['p50_ms']:.1f} | {lat['p95_ms']:.1f} |")
    return "\n".join(lines) + "\n"
