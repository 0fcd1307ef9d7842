"""A 1M-vector point for Vectorize on Chroma, built within a time budget, against raw Chroma and numpy exact.

    nice -n 19 .venv/bin/python scripts/bench_million.py --target 1000000 --budget-s 1800

1. Raw Chroma's best batch size: `--probe` vectors added to a scratch collection at each of `--batch-sizes`.
2. The build: batches of that size go to our index (`upsert`, at most 1,000 a call as the binding allows, so a
   larger batch is several calls) and to a raw Chroma collection (`add`, the whole batch), interleaved batch by
   batch so both see the same machine load, until `--target` vectors or `--budget-s` seconds of building.
3. Queries at the size reached: unfiltered, by npcId (1,000 NPCs), and compound, p50/p95 and recall@10 against
   numpy exact search; RSS; reopen time in a fresh process (from the snapshot, then rebuilt from Chroma).

A build stopped by the budget is reported as partial: the measured point at the size reached, and the time the
full target would take at the measured rate (an extrapolation, marked as such). Writes benchmarks/million.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory_sim.bench import vectorize as vb  # noqa: E402
from memory_sim.bindings.vectorize import Vector  # noqa: E402
from memory_sim.builder import local_vectorize_account  # noqa: E402

UPSERT_LIMIT = 1000  # vectors per upsert() through the binding


def batch_of(start: int, size: int, npcs: int) -> tuple[list[str], np.ndarray, list[dict[str, Any]]]:
    """Vectors start..start+size, the same whatever the batch size (a seed per 1,000-vector block)."""
    ids, parts, meta = [], [], []
    for block in range(start // 1000, -(-(start + size) // 1000)):
        rng = np.random.default_rng(1_000_003 + block)
        vectors = vb.clustered(1000, rng)
        for offset in range(1000):
            i = block * 1000 + offset
            if start <= i < start + size:
                ids.append(f"m{i}")
                parts.append(vectors[offset])
                m = vb.seed_metadata(i, rng)
                m["npcId"] = f"npc{i % npcs:03d}"  # as compare_queries asks (npcs <= 1000)
                meta.append(m)
    return ids, np.stack(parts), meta


def best_batch(work: Path, sizes: list[int], probe: int, npcs: int) -> dict[int, float]:
    rates = {}
    for size in sizes:
        raw = vb.raw_collection(work / f"probe-{size}")
        total = 0.0
        for start in range(0, probe, size):
            ids, matrix, meta = batch_of(start, min(size, probe - start), npcs)
            began = time.perf_counter()
            raw.add(ids=ids, embeddings=matrix, metadatas=meta)
            total += time.perf_counter() - began
        rates[size] = round(probe / total)
        shutil.rmtree(work / f"probe-{size}", ignore_errors=True)
    return rates


def build(work: Path, target: int, batch: int, budget_s: float, npcs: int, raw_until: int) -> dict[str, Any]:
    account = local_vectorize_account(work / "ours")
    account.create_index("memories", vb.DIMS, "cosine")
    index = account.index("memories")
    for prop, kind in vb.METADATA_INDEXES:
        index.create_metadata_index(prop, kind)
    raw = vb.raw_collection(work / "raw")
    ours_s = raw_s = ours_prefix_s = 0.0
    parts: list[np.ndarray] = []
    meta_all: list[dict[str, Any]] = []
    began = time.perf_counter()
    n = raw_n = 0
    while n < target and time.perf_counter() - began < budget_s:
        ids, matrix, meta = batch_of(n, min(batch, target - n), npcs)
        start = time.perf_counter()
        for at in range(0, len(ids), UPSERT_LIMIT):
            index.upsert([Vector(ids[k], matrix[k], meta[k]) for k in range(at, min(len(ids), at + UPSERT_LIMIT))])
        middle = time.perf_counter()
        if n < raw_until:  # the same batches, interleaved, so both rates see the same load
            raw.add(ids=ids, embeddings=matrix, metadatas=meta)
            raw_s, raw_n = raw_s + time.perf_counter() - middle, raw_n + len(ids)
            ours_prefix_s = ours_s + middle - start
        ours_s += middle - start
        parts.append(matrix)
        meta_all.extend(meta)
        n += len(ids)
        print(f"{n:,} vectors: ours {n / ours_s:.0f}/s, raw Chroma {raw_n / max(raw_s, 1e-9):.0f}/s", file=sys.stderr,
              flush=True)
    return {"account": account, "index": index, "raw": raw, "n": n, "ours_s": ours_s, "raw_s": raw_s, "raw_n": raw_n,
            "ours_prefix_s": ours_prefix_s,
            "build_s": time.perf_counter() - began, "matrix": np.concatenate(parts), "meta": meta_all}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=int, default=1_000_000)
    parser.add_argument("--budget-s", type=float, default=1800.0, help="seconds of building, both sides together")
    parser.add_argument("--npcs", type=int, default=1000, help="at most 1,000 (npc000..npc999)")
    parser.add_argument("--batch-sizes", default="1000,5000")
    parser.add_argument("--probe", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--raw-until", type=int, default=None,
                        help="build raw Chroma beside ours only for the first N vectors (default: all); the build "
                        "rates are compared over those N; raw Chroma's queries are skipped when N < the size reached")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks")
    args = parser.parse_args()
    vb.NPCS = args.npcs  # compare_queries draws NPC numbers from it
    work = Path(tempfile.mkdtemp(prefix="bench-million-"))
    report: dict[str, Any] = {"target": args.target, "budget_s": args.budget_s, "dims": vb.DIMS, "npcs": args.npcs,
                              "machine": vb.machine(), "load_before": os.getloadavg()}
    try:
        rates = best_batch(work, [int(s) for s in args.batch_sizes.split(",")], args.probe, args.npcs)
        batch = max(rates, key=lambda size: rates[size])
        report["raw_chroma_probe_per_s"] = rates
        report["batch"] = batch
        raw_until = args.target if args.raw_until is None else args.raw_until
        built = build(work, args.target, batch, args.budget_s, args.npcs, raw_until)
        n, raw_n = built["n"], built["raw_n"]
        report.update(n=n, partial=n < args.target, build_s=round(built["build_s"], 1), raw_n=raw_n,
                      upsert_per_s={"ours": round(n / built["ours_s"]),
                                    "ours_over_first_raw_n": round(raw_n / built["ours_prefix_s"]),
                                    "raw_chroma_add": round(raw_n / built["raw_s"]),
                                    "ours_over_raw": round(built["raw_s"] / built["ours_prefix_s"], 3)})
        if n < args.target:
            report["extrapolated_full_build_s_ours"] = round(args.target / (n / built["ours_s"]))
        rng = np.random.default_rng(11)
        report["queries"] = vb.compare_queries(built["index"], built["raw"], built["matrix"], built["meta"], rng,
                                               args.queries, args.queries if raw_n >= n else 0)
        import psutil

        report["rss_mb"] = round(psutil.Process(os.getpid()).memory_info().rss / 2**20, 1)
        report["raw_vector_mb"] = round(built["matrix"].nbytes / 2**20, 1)
        start = time.perf_counter()
        built["account"].close()
        report["close_with_snapshot_s"] = round(time.perf_counter() - start, 2)
        report["reopen"] = vb.reopen_probes(work / "ours", built["matrix"].nbytes)
        report["load_after"] = os.getloadavg()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    args.out.mkdir(exist_ok=True)
    (args.out / "million.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "million.md").write_text(markdown(report))
    print(markdown(report))


def markdown(r: dict[str, Any]) -> str:
    status = (f"**partial: {r['n']:,} of {r['target']:,} vectors** in the {r['budget_s']:.0f} s budget"
              if r["partial"] else f"{r['n']:,} vectors")
    lines = [f"# Vectorize at scale: {status}", "",
             f"{r['dims']}-d clustered vectors, {r['npcs']:,} npcIds; {r['machine']}; load average "
             f"{r['load_before'][0]:.1f} before, {r['load_after'][0]:.1f} after. Written by scripts/bench_million.py.",
             "", f"Raw Chroma's add rate by batch size (probe): {r['raw_chroma_probe_per_s']}; both sides built with "
             f"batches of {r['batch']:,} (ours in upserts of at most {UPSERT_LIMIT:,}), interleaved over the first "
             f"{r['raw_n']:,} vectors (raw Chroma was built no further).", "",
             "| | ours | raw Chroma add |", "|---|---|---|",
             f"| vectors per second, first {r['raw_n']:,} (build) | {r['upsert_per_s']['ours_over_first_raw_n']:,} "
             f"| {r['upsert_per_s']['raw_chroma_add']:,} |",
             f"| vectors per second, all {r['n']:,} (build) | {r['upsert_per_s']['ours']:,} | - |",
             "", f"Build {r['build_s']} s, both sides together."]
    if r["partial"]:
        lines.append(f"Extrapolated, not measured: at the measured rate our index would take about "
                     f"{r['extrapolated_full_build_s_ours'] / 60:.0f} minutes to reach {r['target']:,} (rates fall "
                     "as an HNSW index grows, so this is a lower bound).")
    lines += ["", "| filter | ours p50 ms | ours p95 ms | numpy exact p50 ms | raw Chroma p50 ms | ours recall@10 "
              "| raw Chroma recall@10 |", "|---|---|---|---|---|---|---|"]
    for name, q in r["queries"].items():
        lines.append(f"| {name} | {q['ours_p50_ms']} | {q['ours_p95_ms']} | {q['numpy_exact_p50_ms']} | "
                     f"{_cell(q['raw_chroma_p50_ms'])} | {q['ours_recall@10']} | {_cell(q['raw_chroma_recall@10'])} |")
    reopen = r["reopen"]
    lines += ["", f"RSS {r['rss_mb']} MB (raw vectors {r['raw_vector_mb']} MB; both indexes and numpy's copy in one "
              f"process); close with snapshot {r['close_with_snapshot_s']} s; reopen to the first query "
              f"{reopen['from_snapshot']['to_first_query_s']} s from the snapshot, "
              f"{reopen['rebuilt_from_chroma']['to_first_query_s']} s rebuilt from Chroma.", ""]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


if __name__ == "__main__":
    main()
