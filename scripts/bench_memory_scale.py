"""Hybrid recall for one NPC with many memories: 1k, 10k, 100k on the sqlite3 and DuckDB D1 engines, with the
index a local data folder uses (Chroma, queried through its numpy arrays; in memory) or the pure-Python oracle
(`--index oracle`), and the hashing embedder with the query embedding cached.

Side by side in one run, on the same data and index:
- new: `MemorySystem.recall` (per-NPC cache, tantivy BM25, array fusion: memory/recalling/recall_cache.py);
- old: what the cache did before, the same steps with BM25 in Python (scripts/bm25_reference.py) and the dict
  fusion of memory/recalling/hybrid.py;
- uncached: every recall reads the NPC's rows from D1 and indexes them (`recall.gather` without the cache).
Medians of the new path's parts are given too, and the new path with query cues off (memory/recalling/cues.py), run
alternately with the rest. Writes benchmarks/<--name>.{json,md} (memory_scale by default).

    .venv/bin/python scripts/bench_memory_scale.py [--sizes 1000 10000 100000] [--queries 30]
        [--engines sqlite duckdb] [--index numpy|oracle] [--speakers] [--name memory_scale]
"""

from __future__ import annotations

import argparse
import json
import os

# One BLAS thread: on 2 shared cores a second one mostly waits (a 10k x 64 product: 0.08 ms against a median of
# 3.9 ms with two, load average 8). Set before numpy loads; an explicit setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

QUERIES = [
    "What did Caroline do at the support group?", "When did Melanie paint a sunrise?", "the camping trip",
    "who went to the pride parade", "adoption agencies", "pottery class with the kids", "a hike in the mountains",
    "counseling and mental health", "the book she read last year", "a concert with her family",
]


def locomo_path() -> Path | None:
    """shared/data/locomo10.json beside the checkout (or beside the worktrees' folder)."""
    for folder in (ROOT.parent, ROOT.parent.parent):
        if (folder / "shared" / "data" / "locomo10.json").exists():
            return folder / "shared" / "data" / "locomo10.json"
    return None


def words() -> list[str]:
    """The vocabulary of LoCoMo's turns (real English word frequencies) when the data is there, else synthetic."""
    path = locomo_path()
    if path is None:
        return [f"w{i}" for i in range(3000)]
    data = json.loads(path.read_text("utf-8"))
    out: list[str] = []
    for conv in data:
        for key, turns in conv["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    out += turn.get("text", "").split()
    return out


SPEAKERS: list[str] = []  # --speakers: each text is an utterance, "Caroline: ...", so recall's query cues fire


def texts(n: int, vocab: list[str], rng: random.Random) -> list[str]:
    said = [" ".join(rng.choice(vocab) for _ in range(rng.randint(8, 30))) for _ in range(n)]
    return [f"{SPEAKERS[i % len(SPEAKERS)]}: {t}" for i, t in enumerate(said)] if SPEAKERS else said


def make_system(engine: str, clock: Callable[[], float], index: str = "numpy") -> Any:
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.env import Env
    from memory_sim.memory.system import MemorySystem
    from memory_sim.memory.writing.provision import ensure_index

    if engine == "sqlite":
        from memory_sim.local.d1.sqlite_engine import SqliteDatabase as Db
    else:
        from memory_sim.local.d1.duckdb_engine import DuckDBDatabase as Db  # type: ignore[assignment]
    embedder = HashingEmbedder(64)
    if index == "oracle":
        env = Env.in_memory(clock, embedder, max_vectors=200_000, db=Db())
    else:
        from memory_sim.local.vectorize.chroma import ChromaAccount

        base = Env.in_memory(clock, embedder, db=Db())
        account = ChromaAccount(clock=clock, max_vectors=200_000)  # Chroma in memory, read through its arrays
        vectorize = ensure_index(account, base.settings.index_name, embedder)
        env = Env(VECTORIZE=vectorize, DB=base.DB, AI=base.AI, embedder=embedder, vectorize_account=account,
                  settings=base.settings)
    return MemorySystem(env, clock=clock)


def fill(system: Any, n: int, rng: random.Random, vocab: list[str]) -> None:
    from memory_sim.memory.models import ShortTermMemory, WorldTime

    for start in range(0, n, 1000):
        batch = [
            ShortTermMemory("ann", text, rng.random(), WorldTime(day=1 + i // 40, hour=i % 24), id=f"m{i}")
            for i, text in enumerate(texts(min(1000, n - start), vocab, rng), start)
        ]
        system.remember_many(batch, index_all=rng.random() < 0.9)  # a few batches stay D1-only


def ms(seconds: list[float]) -> float:
    return round(statistics.median(seconds) * 1000, 2)


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def cpu_timed(fn: Callable[[], Any], cpu: list[float]) -> float:
    """Wall seconds; the process's CPU seconds (all its threads: DuckDB's too) are appended to `cpu`. On a loaded
    shared machine the wall figure includes waiting for a core, the CPU figure does not."""
    started = time.process_time()
    wall = timed(fn)
    cpu.append(time.process_time() - started)
    return wall


class OldPath:
    """The cached hybrid recall as it was: the view's rows and timeline as dicts, BM25 in Python, dict fusion."""

    def __init__(self, system: Any) -> None:
        from bm25_reference import ReferenceBM25

        from memory_sim.memory.recalling.hybrid import Timeline

        self.system = system
        view = system._recall_cache.view("ann")
        self.rows, self.by_id = list(view.rows), dict(view.by_id)
        self.index = ReferenceBM25()
        self.index.extend((m.id, m.content) for m in self.rows)
        days: dict[int, list[str]] = {}
        for m in self.rows:
            days.setdefault(m.day, []).append(m.id)
        self.timeline = Timeline.of(list(days.values()))
        self.positions = self.timeline.positions()

    def recall(self, query: str, k: int = 5) -> list[Any]:
        from memory_sim.memory.ledger import store
        from memory_sim.memory.recalling import recall
        from memory_sim.memory.recalling.hybrid import HybridParams, hybrid_rank
        from memory_sim.memory.scoring import rank_by_score

        env, params = self.system.env, HybridParams()
        query = recall.expand_query(query, store.npc_profiles(env.DB))
        vec = env.embedder.embed([query], query=True)[0]
        matches = recall.vector_matches(env, "ann", vec, params.vector_candidates)
        store.revisions(env.DB)  # the cache's proof, after the vector query as it was
        vector = {i: s for i, s in matches if i in self.by_id}
        ranked = hybrid_rank(vector, self.index.scores(query), self.timeline, k, params, self.positions)
        found = [recall.to_recollection(self.by_id[i], s, "vectorize" if i in vector else "keyword") for i, s in ranked]
        return rank_by_score(found, k)


def parts(system: Any, queries: list[str]) -> dict[str, float]:
    """Medians of the new cached path's parts: D1 proof, vector query, BM25 (tantivy), fusion + neighbours."""
    from memory_sim.memory.recalling import recall
    from memory_sim.memory.recalling.hybrid import HybridParams

    env, cache, out = system.env, system._recall_cache, {"d1_proof": [], "vector": [], "keyword": [], "fusion": []}
    for q in queries:
        vec = env.embedder.embed([q], query=True)[0]
        t0 = time.perf_counter()
        view = cache.view("ann")
        t1 = time.perf_counter()
        vector = {i: s for i, s in recall.vector_matches(env, "ann", vec, 100) if i in view.by_id}
        t2 = time.perf_counter()
        view.index.hits(q)
        t3 = time.perf_counter()
        view.rank(q, vector, 5, HybridParams())  # BM25 again inside: subtracted below
        t4 = time.perf_counter()
        for key, value in zip(out, (t1 - t0, t2 - t1, t3 - t2, max(0.0, (t4 - t3) - (t3 - t2)))):
            out[key].append(value)
    return {k: ms(v) for k, v in out.items()}


def bench(engine: str, n: int, args: argparse.Namespace, vocab: list[str]) -> dict[str, Any]:
    from memory_sim.memory.models import MemoryConfig
    from memory_sim.memory.recalling import recall

    rng = random.Random(args.seed)
    now = [1e9]
    system = make_system(engine, lambda: now[0], args.index)
    fill_s = timed(lambda: fill(system, n, rng, vocab))
    queries = [QUERIES[i % len(QUERIES)] for i in range(args.queries)]
    config = MemoryConfig()
    for q in QUERIES:  # warm the embedder's cache: the query embedding is cached in what follows
        system.env.embedder.embed([recall.expand_query(q, [])], query=True)
    few = queries[: 3 if n >= 50_000 else len(queries)]  # the uncached path takes seconds a query there
    uncached = [timed(lambda q=q: recall.gather(system.env, "ann", q, 5, now[0], config)) for q in few]
    cold = timed(lambda: system.recall("ann", queries[1]))  # builds the NPC's view: D1 read, tokenise, index
    old = OldPath(system)
    old_cached, new_cached, old_cpu, new_cpu, plain_cached, plain_cpu = [], [], [], [], [], []
    with_cues, without_cues = system.config, system.config.replace(query_cues=False)
    for q in queries:  # alternating, so a change in the machine's load hits all alike
        old_cached.append(cpu_timed(lambda q=q: old.recall(q), old_cpu))
        system.config = without_cues  # the ranking before query cues (memory/recalling/cues.py)
        plain_cached.append(cpu_timed(lambda q=q: system.recall("ann", q), plain_cpu))
        system.config = with_cues
        new_cached.append(cpu_timed(lambda q=q: system.recall("ann", q), new_cpu))
    same = sum([r.id for r in old.recall(q)] == [r.id for r in system.recall("ann", q)] for q in QUERIES)
    system.remember_many([_one(n)])  # one write: the cache catches up incrementally
    after_write = timed(lambda: system.recall("ann", queries[2]))
    p50_old, p50_new = ms(old_cached), ms(new_cached)
    return {
        "engine": engine, "memories": n, "index": args.index, "fill_s": round(fill_s, 1),
        "old_cached_p50_ms": p50_old, "cached_p50_ms": p50_new,
        "old_cached_cpu_p50_ms": ms(old_cpu), "cached_cpu_p50_ms": ms(new_cpu), "speedup": round(p50_old / p50_new, 1),
        "cached_p95_ms": round(sorted(new_cached)[int(0.95 * (len(new_cached) - 1))] * 1000, 2),
        "uncached_p50_ms": ms(uncached), "uncached_queries": len(few),
        "first_cached_recall_ms": round(cold * 1000, 2), "recall_after_one_write_ms": round(after_write * 1000, 2),
        "same_top5_as_old": f"{same}/{len(QUERIES)}", "cached_split_ms": parts(system, queries[:10]),
        "no_cues_cached_p50_ms": ms(plain_cached), "no_cues_cached_cpu_p50_ms": ms(plain_cpu),
        "cues_cost": round(p50_new / ms(plain_cached), 2),
    }


def _one(n: int) -> Any:
    from memory_sim.memory.models import ShortTermMemory, WorldTime

    return ShortTermMemory("ann", "a new camping trip with the kids", 0.9, WorldTime(day=1 + n // 40, hour=1), id=f"m{n}")


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        "# Hybrid recall for one NPC with many memories",
        "",
        f"{meta['machine']}; load average at start {meta['load']}, at end {meta['load_end']}; {meta['queries']}"
        f" queries per row, query embedding cached; index: {meta['index']}; OpenBLAS threads:"
        f" {meta['blas_threads']}; HashingEmbedder(64); ~90 % of the"
        " memories indexed. Old: the cached path before tantivy (BM25 in Python, dict fusion), run alternately"
        " with the new one on the same data and index. Uncached: every recall reads D1 and indexes the texts.",
        "",
        "| engine | memories | old cached p50, ms | new cached p50, ms | speedup | new p95, ms |"
        " CPU p50 old / new, ms | uncached p50, ms |"
        " first recall (builds the view), ms | after one write, ms | same top 5 as old |"
        " new split: D1 proof / vector / BM25 / fusion+neighbours, ms | new without query cues p50, ms (CPU) |"
        " with / without cues |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        s = r["cached_split_ms"]
        lines.append(
            f"| {r['engine']} | {r['memories']} | {r['old_cached_p50_ms']} | **{r['cached_p50_ms']}** |"
            f" {r['speedup']}x | {r['cached_p95_ms']} | {r['old_cached_cpu_p50_ms']} / {r['cached_cpu_p50_ms']} |"
            f" {r['uncached_p50_ms']} | {r['first_cached_recall_ms']} |"
            f" {r['recall_after_one_write_ms']} | {r['same_top5_as_old']} |"
            f" {s['d1_proof']} / {s['vector']} / {s['keyword']} / {s['fusion']} |"
            f" {r.get('no_cues_cached_p50_ms', '-')} ({r.get('no_cues_cached_cpu_p50_ms', '-')}) |"
            f" {r.get('cues_cost', '-')}x |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--engines", nargs="+", default=["sqlite", "duckdb"])
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--index", choices=["numpy", "oracle"], default="numpy")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--speakers", action="store_true",
                        help="memories are utterances (\"Caroline: ...\", \"Melanie: ...\"), so query cues fire")
    parser.add_argument("--name", default="memory_scale", help="writes benchmarks/<name>.{json,md}")
    args = parser.parse_args()
    if args.speakers:
        SPEAKERS.extend(["Caroline", "Melanie"])
    index = "Chroma in memory, queried through its numpy arrays" if args.index == "numpy" else "the Python oracle"
    meta = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared), Python {platform.python_version()}",
        "load": round(os.getloadavg()[0], 2), "queries": args.queries, "index": index,
        "blas_threads": os.environ["OPENBLAS_NUM_THREADS"], "speakers": args.speakers,
    }
    vocab = words()
    results = []
    for engine in args.engines:
        for n in args.sizes:
            results.append(bench(engine, n, args, vocab))
            print(json.dumps(results[-1]), flush=True)
    meta["load_end"] = round(os.getloadavg()[0], 2)
    out = ROOT / "benchmarks"
    out.mkdir(exist_ok=True)
    (out / f"{args.name}.json").write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n", "utf-8")
    (out / f"{args.name}.md").write_text(markdown(results, meta), "utf-8")
    print(markdown(results, meta))


if __name__ == "__main__":
    main()
