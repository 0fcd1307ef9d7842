"""Benchmark the memory system: the village run (the demo's work) and recall latency, side by side on
(a) the fast stand-ins (exact oracle, sqlite3, hashing embedder) and (b) the embedded default (Chroma, DuckDB,
bundled MiniLM). Writes benchmarks/memory.json and benchmarks/memory.md.

    .venv/bin/python scripts/bench_memory.py [--days 14] [--npcs 8] [--queries 40] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "memory"))

QUERIES = [
    "What does Margaret think of Tom?", "the pub tonight", "a quarrel at the market", "who is ill",
    "the harvest fair", "someone was kind to me", "money owed", "the storm", "church on Sunday", "the forge",
]


def fast_env(clock: Callable[[], float], _: Path) -> Any:
    from memory_env import build_env

    return build_env(clock)


def default_env(_: Callable[[], float], data: Path) -> Any:
    from memory_sim.env import Env

    return Env.local(data)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench(setup: str, make_env: Callable[..., Any], args: argparse.Namespace) -> dict[str, Any]:
    from memory_sim.memory.system import MemorySystem
    from memory_sim.sim.clock import SimClock
    from memory_sim.sim.driver import run_village
    from memory_sim.sim.world import Village

    with tempfile.TemporaryDirectory() as folder:
        clock = SimClock()
        started = time.perf_counter()
        env = make_env(clock, Path(folder))
        system = MemorySystem(env, clock=clock)
        opened = time.perf_counter() - started
        started = time.perf_counter()
        summary = run_village(system, Village(args.npcs, args.seed), clock, args.days)
        run_s = time.perf_counter() - started
        latency: dict[str, dict[str, float]] = {}
        npcs = [n.id for n in Village(args.npcs).npcs]
        for mode in ("vector", "weighted", "keyword", "hybrid"):
            times = []
            for i in range(args.queries):
                npc = npcs[i % len(npcs)]
                query = QUERIES[i % len(QUERIES)] + f" ({mode} {i})"  # new text: its embedding is included
                t = time.perf_counter()
                if mode == "weighted":
                    system.weighted_recall(npc, query)
                else:
                    system.recall(npc, query, mode=mode)  # type: ignore[arg-type]
                times.append((time.perf_counter() - t) * 1000)
            latency[mode] = {"p50_ms": statistics.median(times), "p95_ms": percentile(times, 0.95)}
        stats = system.stats()
        env.close()
    return {
        "setup": setup,
        "open_s": round(opened, 2),
        "village_s": round(run_s, 2),
        "memories": summary.memories,
        "memories_per_s": round(summary.memories / run_s, 1),
        "vectors": stats["vectors"],
        "consolidations": stats.get("consolidations", 0),
        "recall": {m: {k: round(v, 2) for k, v in d.items()} for m, d in latency.items()},
    }


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    fast, real = results
    lines = [
        "# Memory system benchmark",
        "",
        f"{meta['machine']}; {meta['days']} days, {meta['npcs']} NPCs, seed {meta['seed']}; torch threads "
        f"{meta['threads']}; load average at start {meta['load']}. Recall: {meta['queries']} queries per mode, "
        "on the finished village; each query text is new, so its embedding (a cache miss) is included.",
        "",
        "| measure | oracle + sqlite3 + hashing | Chroma + DuckDB + MiniLM | ratio |",
        "|---|---|---|---|",
        f"| open the Env (the model loads lazily, in the run), s | {fast['open_s']} | {real['open_s']} | |",
        f"| village run, s | {fast['village_s']} | {real['village_s']} | {real['village_s'] / fast['village_s']:.1f}x |",
        f"| memories written / s | {fast['memories_per_s']} | {real['memories_per_s']} | |",
        f"| vectors in the index | {fast['vectors']} | {real['vectors']} | |",
    ]
    for mode in fast["recall"]:
        a, b = fast["recall"][mode], real["recall"][mode]
        lines.append(
            f"| recall {mode} p50 / p95, ms | {a['p50_ms']} / {a['p95_ms']} | {b['p50_ms']} / {b['p95_ms']} | "
            f"{b['p50_ms'] / max(a['p50_ms'], 1e-6):.1f}x |"
        )
    lines += ["", "The demo's own time (`memory-sim demo`, model load included) is in docs/memory.md."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--npcs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    meta = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared), Python {platform.python_version()}",
        "days": args.days, "npcs": args.npcs, "seed": args.seed, "queries": args.queries, "threads": args.threads,
        "load": round(os.getloadavg()[0], 2),
    }
    results = [bench("fast", fast_env, args), bench("embedded-default", default_env, args)]
    out = ROOT / "benchmarks"
    out.mkdir(exist_ok=True)
    (out / "memory.json").write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n", "utf-8")
    (out / "memory.md").write_text(markdown(results, meta), "utf-8")
    print(markdown(results, meta))


if __name__ == "__main__":
    main()
