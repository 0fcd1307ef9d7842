"""`memory-sim bench`: every benchmark side by side, in one process and one run.

Sections (the per-area scripts in scripts/ run the same functions, so the figures mean the same thing):
- index: Vectorize on Chroma against numpy exact and raw Chroma at each size (bench/vectorize.py):
  query p50/p95 per filter, recall@10, upsert rate, reopen time, resident memory;
- embeddings: the project path against the raw model forward pass, and the cache (bench/embed.py);
- d1: statement overhead of D1 on DuckDB against raw DuckDB (bench/d1.py);
- end_to_end: a tick of 100 NPCs through MemorySystem (remember, index, recall) in memories/s against the
  model's own throughput, and recall latency with and without embedding the query.
Writes bench.{json,md} and two plots into the output folder.
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memory_sim.eval.metrics import latency_summary

FULL_SIZES = (10_000, 100_000, 300_000)
QUICK_SIZES = (10_000,)
Progress = Callable[[str], None]


def index_section(sizes: Sequence[int], quick: bool, progress: Progress) -> list[dict[str, Any]]:
    from memory_sim.bench import vectorize

    out = []
    for n in sizes:
        progress(f"index: {n:,} x {vectorize.DIMS}")
        started = time.perf_counter()
        report = vectorize.run(n, 50 if quick else 200, 10 if quick else 30)
        report["seconds"] = round(time.perf_counter() - started, 1)
        out.append(report)
    return out


def embed_section(quick: bool, progress: Progress) -> dict[str, Any]:
    from memory_sim.bench import embed
    from memory_sim.builder.models import MINILM, local_ai

    progress("embeddings: project path vs raw forward, cache")
    n, rounds = (128, 1) if quick else (512, 3)
    with tempfile.TemporaryDirectory() as tmp:
        return {
            "throughput": embed.throughput(local_ai(), MINILM, embed.sentences(n, 1), 32, "mean", rounds),
            "cache": embed.cache_check(embed.sentences(1000 if quick else 10_000, 3), Path(tmp) / "cache.sqlite"),
        }


def d1_section(quick: bool, progress: Progress) -> dict[str, Any]:
    from memory_sim.bench import d1

    progress("d1: statement overhead vs raw DuckDB")
    rows, repeat = (20_000, 5) if quick else (100_000, 15)
    db = d1.filled(rows, 10)
    try:
        return {
            "table_rows": rows,
            "overhead": d1.overhead(db, repeat),
            "day_ordered_read": d1.day_ordered_read(db, repeat),
        }
    finally:
        db.close()


def tick_memories(npcs: int, per_npc: int, tick: int) -> list[Any]:
    """One hour of a 100-NPC world: distinct texts (no cache hits), important enough to be indexed at once."""
    from memory_sim.memory.models import ShortTermMemory, WorldTime

    places = ("the pub", "the forge", "the market", "the church", "the mill", "the green", "the bakery")
    return [
        ShortTermMemory(f"npc{i:03d}", f"At {places[(i + j) % len(places)]} npc{(i + j + 1) % npcs:03d} told me "
                        f"story {tick}-{j} about the harvest and the weather.", 0.8, WorldTime(1, tick % 24))
        for i in range(npcs) for j in range(per_npc)
    ]


def end_to_end_section(quick: bool, model_per_s: float, progress: Progress) -> dict[str, Any]:
    from memory_sim.env import Env
    from memory_sim.memory.system import MemorySystem
    from memory_sim.sim.clock import SimClock

    npcs, per_npc, ticks = (100, 2, 1) if quick else (100, 5, 3)
    progress(f"end to end: {ticks} tick(s) of {npcs} NPCs x {per_npc} memories, then recall")
    with (
        tempfile.TemporaryDirectory() as tmp,
        Env.local(tmp, embed_model="sentence-transformers/all-MiniLM-L6-v2") as env,
    ):
        system = MemorySystem(env, clock=SimClock())
        system.remember_many(tick_memories(npcs, 1, 999))  # warm-up: model load, index creation
        remembered, seconds = 0, 0.0
        for tick in range(ticks):
            batch = tick_memories(npcs, per_npc, tick)
            started = time.perf_counter()
            system.remember_many(batch)
            seconds += time.perf_counter() - started
            remembered += len(batch)
        system.clock.seconds += 86_400  # type: ignore[attr-defined]  # past the visibility window
        fresh: list[float] = []
        cached: list[float] = []
        for i in range(npcs):
            query = f"what did npc{(i + 1) % npcs:03d} say about the harvest ({i})"
            for bucket in (fresh, cached):  # first call embeds the query, the second finds it in the cache
                started = time.perf_counter()
                system.recall(f"npc{i:03d}", query, top_k=5)
                bucket.append(time.perf_counter() - started)
    rate = remembered / seconds
    return {
        "npcs": npcs, "memories": remembered, "memories_per_s": round(rate, 1),
        "model_limit_per_s": model_per_s, "share_of_model_limit": round(rate / model_per_s, 3),
        "recall_with_embedding": latency_summary(fresh), "recall_without_embedding": latency_summary(cached),
    }


def machine() -> str:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.machine()}, {os.cpu_count()} cores ({usable} usable, shared; load {load:.1f} at start), "
            f"Python {platform.python_version()}")


def run_all(*, quick: bool, sizes: Sequence[int] | None = None, progress: Progress = lambda _: None) -> dict[str, Any]:
    import torch

    torch.set_num_threads(1)  # faster than 2 on a loaded 2-core machine (docs/memory.md); same for all sections
    started = time.perf_counter()
    report: dict[str, Any] = {"machine": machine(), "quick": quick}
    report["embeddings"] = embed_section(quick, progress)
    report["d1"] = d1_section(quick, progress)
    model_rate = report["embeddings"]["throughput"]["raw_forward_per_s"]
    report["end_to_end"] = end_to_end_section(quick, model_rate, progress)
    report["index"] = index_section(sizes or (QUICK_SIZES if quick else FULL_SIZES), quick, progress)
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


FILTERS = ("npcId", "compound", "none")


def markdown(report: dict[str, Any]) -> str:
    e, d, t = report["embeddings"], report["d1"], report["end_to_end"]
    tp, cache = e["throughput"], e["cache"]
    lines = [f"# memory-sim bench ({'quick' if report['quick'] else 'full'} run, {report['seconds']} s)", "",
             f"Machine: {report['machine']}. torch 1 thread.", "", "## Index (Vectorize on Chroma)", "",
             "| vectors | filter | ours p50 / p95 ms | numpy exact p50 / p95 | raw Chroma p50 / p95 | ours recall@10 | "
             "raw Chroma recall@10 | ours / numpy p50 |", "|---|---|---|---|---|---|---|---|"]
    for r in report["index"]:
        for name in FILTERS:
            q = r["queries"][name]
            lines.append(
                f"| {r['n']:,} | {name} | {q['ours_p50_ms']} / {q['ours_p95_ms']} | {q['numpy_exact_p50_ms']} / "
                f"{q['numpy_exact_p95_ms']} | {q['raw_chroma_p50_ms']} / {q['raw_chroma_p95_ms']} | "
                f"{q['ours_recall@10']} | {q['raw_chroma_recall@10']} | {q['ours_over_numpy_p50']}x |"
            )
    lines += [
        "",
        "| vectors | upsert ours / raw Chroma per s (ratio) | reopen from snapshot / rebuilt s | index RSS MB "
        "(x raw vectors) | bench process RSS MB | section s |",
        "|---|---|---|---|---|---|",
    ]
    for r in report["index"]:
        u, ro = r["upsert_per_s"], r["reopen"]
        lines.append(f"| {r['n']:,} | {u['ours']:,} / {u['raw_chroma_add']:,} ({u['ratio']}) | "
                     f"{ro['from_snapshot']['to_first_query_s']} / {ro['rebuilt_from_chroma']['to_first_query_s']} | "
                     f"{ro['from_snapshot']['rss_delta_mb']} ({ro['index_rss_over_raw_vectors']}x) | "
                     f"{r['memory']['rss_mb']} | {r['seconds']} |")
    lines += ["", "## Embeddings, D1, end to end", "", "| measure | ours | baseline | ratio |", "|---|---|---|---|",
              f"| MiniLM texts/s: project path vs raw forward ({tp['texts']} texts, batch {tp['batch_size']}) | "
              f"{tp['project_path_per_s']} | {tp['raw_forward_per_s']} | {tp['ratio_project_over_raw']} |",
              f"| embedding cache: model calls on a second embed of {cache['texts']} texts | "
              f"{cache['model_calls_second_embed']} ({cache['second_embed_s']} s) | "
              f"{cache['model_calls_first_embed']} ({cache['first_embed_s']} s) | |",
              f"| D1 ms per statement vs raw DuckDB ({d['table_rows']:,} rows) | "
              f"{d['overhead']['d1_ms_per_statement']:.3f} | {d['overhead']['raw_ms_per_statement']:.3f} | "
              f"{d['overhead']['ratio']:.2f}x |",
              f"| D1 day-ordered read of one NPC ({d['day_ordered_read']['rows']:,} rows), ms | "
              f"{d['day_ordered_read']['d1_ms']:.1f} | {d['day_ordered_read']['raw_ms']:.1f} | "
              f"{d['day_ordered_read']['ratio']:.2f}x |",
              f"| village tick of {t['npcs']} NPCs ({t['memories']} memories remembered + indexed), memories/s vs "
              f"the model's own throughput | {t['memories_per_s']} | {t['model_limit_per_s']} | "
              f"{t['share_of_model_limit']} |",
              f"| recall p50 / p95 ms: with the query embedding vs cached | "
              f"{t['recall_with_embedding']['p50_ms']} / {t['recall_with_embedding']['p95_ms']} | "
              f"{t['recall_without_embedding']['p50_ms']} / {t['recall_without_embedding']['p95_ms']} | |", ""]
    return "\n".join(lines)


def plot(report: dict[str, Any], out: Path, prefix: str = "bench") -> list[Path]:
    """latency against index size (npcId filter), and recall@10 against p50 latency (every size and filter)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = sorted(report["index"], key=lambda r: r["n"])
    sizes = [r["n"] for r in runs]
    systems = (("ours", "ours (Vectorize on Chroma)"), ("numpy_exact", "numpy exact"), ("raw_chroma", "raw Chroma"))
    paths = [out / f"{prefix}_latency_vs_size.png", out / f"{prefix}_recall_vs_latency.png"]
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, label in systems:
        for name, style in (("npcId", "-o"), ("compound", "--s")):
            ax.plot(sizes, [r["queries"][name][f"{key}_p50_ms"] for r in runs], style, label=f"{label}, {name}")
    ax.set(xscale="log", yscale="log", xlabel="vectors in the index", ylabel="query p50 (ms)",
           title="Filtered query latency against index size")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(paths[0], dpi=120)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, label, marker in (("ours", "ours", "o"), ("raw_chroma", "raw Chroma", "s")):
        xs = [r["queries"][f][f"{key}_p50_ms"] for r in runs for f in FILTERS]
        ys = [r["queries"][f][f"{key}_recall@10"] for r in runs for f in FILTERS]
        ax.scatter(xs, ys, marker=marker, label=label)
        for x, y, text in zip(xs, ys, [f"{r['n'] // 1000}k {f}" for r in runs for f in FILTERS], strict=True):
            ax.annotate(text, (x, y), fontsize=6)
    ax.set(xscale="log", xlabel="query p50 (ms)", ylabel="recall@10 vs numpy exact", ylim=(0, 1.05),
           title="Recall against latency")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(paths[1], dpi=120)
    plt.close(fig)
    return paths
