"""Hybrid recall for one NPC with many memories: 1k, 10k, 30k on the sqlite3 and DuckDB D1 engines, with the
fast stand-ins (OracleAccount index, HashingEmbedder; the query embedding is cached). Side by side in one run:
the uncached path (every recall reads all the NPC's rows from D1 and rebuilds BM25) against the MemorySystem's
per-NPC cache (memory/recall_cache.py), and the split of the uncached path. Writes
benchmarks/memory_scale.{json,md}.

    .venv/bin/python scripts/bench_memory_scale.py [--sizes 1000 10000 30000] [--queries 30] [--engines sqlite duckdb]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUERIES = [
    "What did Caroline do at the support group?", "When did Melanie paint a sunrise?", "the camping trip",
    "who went to the pride parade", "adoption agencies", "pottery class with the kids", "a hike in the mountains",
    "counseling and mental health", "the book she read last year", "a concert with her family",
]


def words() -> list[str]:
    """The vocabulary of LoCoMo's turns (real English word frequencies) when the data is there, else synthetic."""
    path = ROOT.parent / "shared" / "data" / "locomo10.json"
    if not path.exists():
        return [f"w{i}" for i in range(3000)]
    data = json.loads(path.read_text("utf-8"))
    out: list[str] = []
    for conv in data:
        for key, turns in conv["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    out += turn.get("text", "").split()
    return out


def texts(n: int, vocab: list[str], rng: random.Random) -> list[str]:
    return [" ".join(rng.choice(vocab) for _ in range(rng.randint(8, 30))) for _ in range(n)]


def make_system(engine: str, clock: Callable[[], float]) -> Any:
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.env import Env
    from memory_sim.memory.system import MemorySystem

    if engine == "sqlite":
        from memory_sim.local.d1.sqlite_engine import SqliteDatabase as Db
    else:
        from memory_sim.local.d1.duckdb_engine import DuckDBDatabase as Db  # type: ignore[assignment]
    env = Env.in_memory(clock, HashingEmbedder(64), max_vectors=200_000, db=Db())
    return MemorySystem(env, clock=clock)


def fill(system: Any, n: int, rng: random.Random, vocab: list[str]) -> None:
    from memory_sim.memory.models import ShortTermMemory, WorldTime

    for start in range(0, n, 1000):
        batch = [
            ShortTermMemory("ann", text, rng.random(), WorldTime(day=1 + i // 40, hour=i % 24), id=f"m{i}")
            for i, text in enumerate(texts(min(1000, n - start), vocab, rng), start)
        ]
        system.remember_many(batch, index_all=rng.random() < 0.9)  # a few batches stay D1-only


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), out


def split(system: Any, queries: list[str]) -> dict[str, float]:
    """Medians of the uncached path's parts for one query each."""
    from memory_sim.memory import recall
    from memory_sim.memory.hybrid import HybridParams, Timeline, hybrid_rank
    from memory_sim.memory.keyword import BM25Index

    env, out = system.env, {"d1_read": [], "tokenise": [], "score": [], "fuse_neighbours": [], "vector": []}
    for q in queries:
        vec = env.embedder.embed([q], query=True)[0]
        t0 = time.perf_counter()
        vector = dict(recall.vector_matches(env, "ann", vec, 100))
        t1 = time.perf_counter()
        rows = recall.semantic_memories(env, "ann")
        t2 = time.perf_counter()
        index = BM25Index()
        index.extend((m.id, m.content) for m in rows)
        t3 = time.perf_counter()
        keyword = index.scores(q)
        t4 = time.perf_counter()
        days: dict[int, list[str]] = {}
        for m in rows:
            days.setdefault(m.day, []).append(m.id)
        hybrid_rank(vector, keyword, Timeline.of(list(days.values())), 5, HybridParams())
        t5 = time.perf_counter()
        for key, value in zip(out, (t2 - t1, t3 - t2, t4 - t3, t5 - t4, t1 - t0)):
            out[key].append(value * 1000)
    return {k: round(statistics.median(v), 2) for k, v in out.items()}


def bench(engine: str, n: int, args: argparse.Namespace, vocab: list[str]) -> dict[str, Any]:
    from memory_sim.memory import recall
    from memory_sim.memory.models import MemoryConfig

    rng = random.Random(args.seed)
    now = [1e9]
    system = make_system(engine, lambda: now[0])
    t = time.perf_counter()
    fill(system, n, rng, vocab)
    fill_s = time.perf_counter() - t
    queries = [QUERIES[i % len(QUERIES)] for i in range(args.queries)]
    config = MemoryConfig()
    for q in QUERIES:  # warm the embedder's cache: the query embedding is cached in what follows
        system.env.embedder.embed([recall.expand_query(q, [])], query=True)
    uncached = [timed(lambda q=q: recall.gather(system.env, "ann", q, 5, now[0], config), 1)[0] for q in queries]
    cold = timed(lambda: system.recall("ann", queries[1]), 1)[0]  # builds the NPC's view: D1 read + tokenise
    cached = [timed(lambda q=q: system.recall("ann", q), 1)[0] for q in queries]
    system.remember_many([_one(n)])  # one write: the cache catches up incrementally
    after_write = timed(lambda: system.recall("ann", queries[2]), 1)[0]
    p50_u, p50_c = statistics.median(uncached), statistics.median(cached)
    return {
        "engine": engine, "memories": n, "fill_s": round(fill_s, 1),
        "uncached_p50_ms": round(p50_u, 2), "cached_p50_ms": round(p50_c, 2), "speedup": round(p50_u / p50_c, 1),
        "first_cached_recall_ms": round(cold, 2), "recall_after_one_write_ms": round(after_write, 2),
        "uncached_split_ms": split(system, queries[: min(10, len(queries))]),
    }


def _one(n: int) -> Any:
    from memory_sim.memory.models import ShortTermMemory, WorldTime

    return ShortTermMemory("ann", "a new camping trip with the kids", 0.9, WorldTime(day=1 + n // 40, hour=1), id=f"m{n}")


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        "# Hybrid recall for one NPC with many memories",
        "",
        f"{meta['machine']}; load average at start {meta['load']}; {meta['queries']} queries per row, query "
        "embedding cached; OracleAccount index + HashingEmbedder(64); ~90 % of the memories indexed.",
        "",
        "| engine | memories | uncached p50, ms | cached p50, ms | speedup | cached minus vector query, ms |"
        " first recall (builds the view), ms | after one write, ms |"
        " uncached split: D1 read / tokenise / score / fuse+neighbours / vector, ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        s = r["uncached_split_ms"]
        lines.append(
            f"| {r['engine']} | {r['memories']} | {r['uncached_p50_ms']} | {r['cached_p50_ms']} | {r['speedup']}x |"
            f" {max(0.0, r['cached_p50_ms'] - s['vector']):.1f} | {r['first_cached_recall_ms']} |"
            f" {r['recall_after_one_write_ms']} | {s['d1_read']} / {s['tokenise']} / {s['score']} /"
            f" {s['fuse_neighbours']} / {s['vector']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 30000])
    parser.add_argument("--engines", nargs="+", default=["sqlite", "duckdb"])
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    meta = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared), Python {platform.python_version()}",
        "load": round(os.getloadavg()[0], 2), "queries": args.queries,
    }
    vocab = words()
    results = []
    for engine in args.engines:
        for n in args.sizes:
            results.append(bench(engine, n, args, vocab))
            print(json.dumps(results[-1]), flush=True)
    out = ROOT / "benchmarks"
    out.mkdir(exist_ok=True)
    (out / "memory_scale.json").write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n", "utf-8")
    (out / "memory_scale.md").write_text(markdown(results, meta), "utf-8")
    print(markdown(results, meta))


if __name__ == "__main__":
    main()
