"""The village's ground truth: "what does X think of Y?" answered by the memory system, against a naive
keyword scan of D1 (the seed's claim: semantic recall finds what a diary scan misses).

The questions ship with the package (eval/data/village_questions.json). Each names an NPC and a rule; the expected
memories are the ones D1 holds that match the rule (the NPC's observations of a `type` whose `about` includes an
NPC), found by a query after the seeded village has run, never hand-picked ids. Scores per question: precision@k
(share of the top k that show an expected memory), recall@10 (share of the expected shown in the top 10), hit@1. A
recalled id shows itself, its same-text twins and, for a summary, its sources (eval/quality.py): the same before and
after consolidation, and a ranking is not rewarded for returning one sentence twice.

Consolidation is measured too: the same village runs twice, first with the consolidation job left out, then
with every job as a service runs them, and the questions are asked of both; with repeats in the top 5 and
summaries that only repeat a memory (goal: none of either; consolidation must not lower the scores).
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_sim.bindings.d1 import D1Database
from memory_sim.eval.metrics import latency_summary, mean_scores
from memory_sim.eval.quality import NpcTexts, lineage, npc_texts, summary_redundancy
from memory_sim.memory.recalling import access
from memory_sim.memory.system import MemorySystem

METHODS: tuple[str, ...] = ("vector", "keyword", "hybrid", "weighted", "like-scan")
RECALL_METHODS: tuple[str, ...] = ("vector", "keyword", "hybrid", "weighted")  # the memory system's own


def with_scorings(methods: Sequence[str], scorings: Sequence[str]) -> list[str]:
    """`weighted` once per scoring preset: `weighted` for the design's, `weighted:<preset>` for the others."""
    named = ["weighted" if s == "design" else f"weighted:{s}" for s in scorings]
    return [n for m in methods for n in (named if m == "weighted" else [m])]


def is_recall_method(method: str) -> bool:
    return method in RECALL_METHODS or method.startswith("weighted:")
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
    """The rule, as a D1 query: `about` is a comma-separated list of NPC ids. Observations only: what the NPC
    lived, the same set before and after consolidation (a summary is credited through its sources)."""
    rows = db.prepare(
        "SELECT id FROM short_term_memories WHERE npc_id = ? AND type = ? AND (',' || about || ',') LIKE ?"
        " AND kind = 'observation'"
    ).bind(question.npc, question.type, f"%,{question.about},%").all().results
    return {r["id"] for r in rows}


def scan_words(query: str) -> list[str]:
    from memory_sim.memory.recalling.keyword import STOPWORDS

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
    if method == "weighted" or method.startswith("weighted:"):
        scoring = method.partition(":")[2] or "design"
        found = system.weighted_recall(question.npc, question.query, top_k=TOP_K, scoring=scoring)  # type: ignore[arg-type]
        return [r.id for r in found]
    return [r.id for r in system.recall(question.npc, question.query, top_k=TOP_K, mode=method)]  # type: ignore[arg-type]


def question_scores(
    ranked: Sequence[str], expected: set[str], covered: Callable[[str], set[str]] = lambda i: {i}
) -> dict[str, float]:
    """`covered(id)`: the memories a recalled id shows (itself by default)."""
    shown = [covered(i) for i in ranked[:10]]
    return {
        "precision@5": sum(1 for ids in shown[:5] if ids & expected) / 5,
        "precision@10": sum(1 for ids in shown if ids & expected) / 10,
        "recall@10": len(expected & set().union(*shown)) / len(expected),
        "hit@1": float(bool(shown) and bool(shown[0] & expected)),
    }


def evaluate(
    system: MemorySystem,
    questions: Sequence[VillageQuestion],
    methods: Sequence[str] = METHODS,
    timer: Callable[[], float] = time.perf_counter,
) -> dict[str, Any]:
    """Every question by every method; questions whose rule matches nothing are skipped (and counted).
    `repeats_top5`: per method, entries of the top 5 repeating an earlier one, summed over the questions.
    Method by method: weighted recall records last access, so each weighted method starts from the last
    accesses the village left and they are put back after it (no preset ranks by another's recalls)."""
    rows: dict[str, list[dict[str, float]]] = {m: [] for m in methods}
    seconds: dict[str, list[float]] = {m: [] for m in methods}
    repeats = dict.fromkeys(methods, 0)
    quoted = dict.fromkeys(methods, 0)
    sources = lineage(system.env.DB)
    texts: dict[str, NpcTexts] = {}
    asked = [(q, e) for q in questions if (e := expected_ids(system.env.DB, q))]
    per_question: list[dict[str, Any]] = [
        {"npc": q.npc, "query": q.query, "expected": len(e)} for q, e in asked
    ]
    for question, _ in asked:
        if question.npc not in texts:
            texts[question.npc] = npc_texts(system.env.DB, question.npc, sources)
    recorded = access.snapshot(system.env.DB)
    for method in methods:
        for (question, expected), entry in zip(asked, per_question, strict=True):
            npc = texts[question.npc]
            started = timer()
            ranked = answer(system, question, method)
            seconds[method].append(timer() - started)
            scores = question_scores(ranked, expected, npc.covered)
            rows[method].append(scores)
            repeats[method] += npc.repeats(ranked[:5])
            quoted[method] += npc.quoted(ranked[:5])
            entry[method] = scores["precision@5"]
        access.restore(system.env.DB, recorded)
    summary = {m: mean_scores(rows[m]) | {"latency": latency_summary(seconds[m])} for m in methods}
    return {"methods": summary, "questions": per_question, "skipped": len(questions) - len(per_question),
            "repeats_top5": repeats, "quoted_top5": quoted}


def run_village_eval(
    question_set: QuestionSet,
    *,
    methods: Sequence[str] = METHODS,
    work_dir: Path | None = None,
    model: str = "sentence-transformers/all-MiniLM-L6-v2",
    progress: Callable[[str], None] = lambda _: None,
    d1_engine: str = "duckdb",
) -> dict[str, Any]:
    """Runs the seeded village on fresh local Envs (Chroma + DuckDB + the model) and measures it (`measure`)."""
    from memory_sim.env import Env
    from memory_sim.sim.clock import SimClock

    with tempfile.TemporaryDirectory(prefix="memory_sim_village_") as tmp:

        @contextmanager
        def fresh(name: str) -> Iterator[tuple[MemorySystem, SimClock]]:
            clock = SimClock()
            with Env.local(Path(work_dir or tmp) / name, embed_model=model, d1_engine=d1_engine) as env:
                yield MemorySystem(env, clock=clock), clock

        report = measure(fresh, question_set, methods, progress)
    report["meta"]["model"] = model
    return report


Fresh = Callable[[str], AbstractContextManager[tuple[MemorySystem, Any]]]


def measure(
    fresh: Fresh,
    question_set: QuestionSet,
    methods: Sequence[str] = METHODS,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """The village twice, each on a fresh system from `fresh(name)` (a context giving the system and its sim
    clock): first with the consolidation job left out, then with every job, as a service runs them. The
    questions are asked of both; the report's `methods` are the second's, `consolidation` compares the two."""
    from memory_sim.scheduling import SimScheduler, memory_jobs
    from memory_sim.sim.driver import run_village
    from memory_sim.sim.world import Village

    def live(system: MemorySystem, clock: Any, scheduler: SimScheduler | None) -> float:
        progress(f"running the village: {question_set.npcs} NPCs, seed {question_set.seed}, {question_set.days} days")
        started = time.perf_counter()
        run_village(
            system, Village(question_set.npcs, question_set.seed), clock, question_set.days, scheduler=scheduler
        )
        progress(f"asking {len(question_set.questions)} questions x {len(methods)} methods")
        return time.perf_counter() - started

    with fresh("village-without-consolidation") as (system, clock):
        live(system, clock, SimScheduler(system, [j for j in memory_jobs(system) if j.name != "consolidate"]))
        before = evaluate(system, question_set.questions, methods)
    with fresh("village") as (system, clock):
        run_s = live(system, clock, None)
        report = evaluate(system, question_set.questions, methods)
        report["consolidation"] = consolidation_quality(before, report, system)
        stats = system.stats()
    report["meta"] = {
        "npcs": question_set.npcs, "seed": question_set.seed, "days": question_set.days,
        "memories": stats["memories"], "vectors": stats["vectors"], "village_run_s": round(run_s, 1),
    }
    return report


def consolidation_quality(before: dict[str, Any], after: dict[str, Any], system: MemorySystem) -> dict[str, Any]:
    """Without and with consolidation: scores, their change, repeats in the top 5, redundant summaries."""
    metrics = ("precision@5", "precision@10", "recall@10", "hit@1")
    change = {m: {k: round(after["methods"][m][k] - before["methods"][m][k], 4) for k in metrics}
              for m in after["methods"]}
    recall = [m for m in after["repeats_top5"] if is_recall_method(m)]
    return {
        "before": {m: {k: s[k] for k in metrics} for m, s in before["methods"].items()},
        "change": change,
        "repeats_top5_before": before["repeats_top5"],
        "repeats_top5": after["repeats_top5"],
        "recall_repeats_top5": sum(after["repeats_top5"][m] for m in recall),  # goal 0
        "quoted_top5": after.get("quoted_top5", {}),  # a summary beside a memory whose sentence it quotes
        "summaries": summary_redundancy(system.env.DB),  # goal: redundant 0, framed 0
    }


def markdown(report: dict[str, Any], machine: str) -> str:
    meta = report["meta"]
    lines = [
        f"# Village ground truth: what NPCs think of each other ({len(report['questions'])} questions)",
        "",
        f"Machine: {machine}. Village: {meta['npcs']} NPCs, seed {meta['seed']}, {meta['days']} days; "
        f"{meta['memories']} memories in D1, {meta['vectors']} vectors. Model: {meta['model']}.",
        "Expected: the NPC's observations of type opinion whose `about` includes the other NPC (a D1 query); a",
        "recalled id shows itself, its same-text twins and, for a summary, its sources. After consolidation:",
        "",
        "| method | precision@5 | precision@10 | recall@10 | hit@1 | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for method, s in report["methods"].items():
        lat = s["latency"]
        lines.append(f"| {method} | {s['precision@5']:.3f} | {s['precision@10']:.3f} | {s['recall@10']:.3f} | "
                     f"{s['hit@1']:.3f} | {lat['p50_ms']:.1f} | {lat['p95_ms']:.1f} |")
    if "consolidation" in report:
        lines += consolidation_markdown(report["consolidation"])
    return "\n".join(lines) + "\n"


def consolidation_markdown(quality: dict[str, Any]) -> list[str]:
    lines = [
        "",
        "## Consolidation: without -> with (the same village run twice, the consolidation job left out of the first)",
        "",
        "| method | precision@5 | precision@10 | recall@10 | hit@1 | repeats in top 5 |",
        "|---|---|---|---|---|---|",
    ]
    for method, before in quality["before"].items():
        after = {k: before[k] + quality["change"][method][k] for k in before}
        cells = " | ".join(f"{before[k]:.3f} -> {after[k]:.3f}" for k in before)
        lines.append(
            f"| {method} | {cells} | {quality['repeats_top5_before'][method]} -> {quality['repeats_top5'][method]} |"
        )
    summaries = quality["summaries"]
    lines += [
        "",
        f"Summaries: {summaries['summaries']} ({summaries['linked_days']} days of one memory linked instead); "
        f"repeating one memory: {summaries['redundant']}; carrying a diary's echo line: {summaries['framed']}. "
        f"Repeats in the memory system's top 5, all questions and modes: {quality['recall_repeats_top5']}.",
    ]
    quoted = quality.get("quoted_top5", {})
    if quoted:
        shown = ", ".join(f"{m} {n}" for m, n in quoted.items() if is_recall_method(m))
        lines.append(f"A summary beside a memory whose sentence it quotes (another day's twin of a source), top 5, "
                     f"all questions: {shown}.")
    return lines
