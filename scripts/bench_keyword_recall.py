"""Keyword recall for one NPC with many memories, side by side in one run on the same data (sqlite3 or DuckDB D1,
the hashing embedder; the vector index plays no part in keyword mode):
- per call: `recall.keyword_candidates` without the cache, an index built from D1 for each call (the fallback);
- cached: the same through the MemorySystem's per-NPC keyword view (memory/recalling/recall_cache.py), proved current
  against D1 with one read;
- recall: `MemorySystem.recall(mode="keyword")`, the whole call on the cached view.
Queries alternate between the paths, so a change in the machine's load hits both alike; an untimed cached recall
follows each per-call one, whose after-effects would otherwise slow the next call (cached recalls do not build).
Prints a markdown table.

    .venv/bin/python scripts/bench_keyword_recall.py [--sizes 2000 10000] [--queries 20] [--engines duckdb]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads (see bench_memory_scale.py)
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_memory_scale import QUERIES, fill, make_system, ms, timed, words  # noqa: E402


def bench(engine: str, n: int, queries: int, seed: int) -> dict[str, Any]:
    from memory_sim.memory.recalling import recall

    rng = random.Random(seed)
    now = [1e9]
    system = make_system(engine, lambda: now[0], "oracle")
    fill_s = timed(lambda: fill(system, n, rng, words()))
    env, cache = system.env, system._recall_cache
    cold = timed(lambda: recall.keyword_candidates(env, "ann", QUERIES[0], 5, cache))  # builds the view
    per_call, cached, whole = [], [], []
    same = 0
    for i in range(queries):
        q = QUERIES[i % len(QUERIES)]
        per_call.append(timed(lambda q=q: recall.keyword_candidates(env, "ann", q, 5)))
        system.recall("ann", q, mode="keyword")  # untimed: a build's after-effects (allocator, DuckDB's threads)
        cached.append(timed(lambda q=q: recall.keyword_candidates(env, "ann", q, 5, cache)))
        whole.append(timed(lambda q=q: system.recall("ann", q, mode="keyword")))
        same += recall.keyword_candidates(env, "ann", q, 5) == recall.keyword_candidates(env, "ann", q, 5, cache)
    return {"engine": engine, "memories": n, "fill_s": round(fill_s, 1), "per_call_p50_ms": ms(per_call),
            "cached_p50_ms": ms(cached), "recall_p50_ms": ms(whole), "first_cached_ms": round(cold * 1000, 2),
            "same": f"{same}/{queries}"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--engines", nargs="+", default=["duckdb"])
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    rows = [bench(e, n, args.queries, args.seed) for e in args.engines for n in args.sizes]
    print("| D1 | memories | per call p50 ms | cached p50 ms | recall() p50 ms | first (builds) ms | same |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['engine']} | {r['memories']:,} | {r['per_call_p50_ms']} | {r['cached_p50_ms']} |"
              f" {r['recall_p50_ms']} | {r['first_cached_ms']} | {r['same']} |")


if __name__ == "__main__":
    main()
