"""Vectorize on Chroma against numpy exact search and raw Chroma, side by side in one run (`memory-sim bench`'s
index section; scripts/bench_vectorize.py writes it on its own).

Data: clustered vectors (like real embeddings), 100 npcIds x N/100, the seed's metadata (type, day, importance,
decayFactor, textPreview). Measures query p50/p95 per filter, recall@10 against numpy exact, upsert rate, reopen
time in a fresh process, resident memory (psutil).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np

from memory_sim.bindings.vectorize import Vector
from memory_sim.builder import local_vectorize_account

DIMS = 384
NPCS = 100
BATCH = 1000
METADATA_INDEXES: tuple[tuple[str, Literal["string", "number"]], ...] = (
    ("npcId", "string"), ("type", "string"), ("day", "number"), ("importance", "number"))


# One fixed set of topic centres for data and queries alike: a query, like an embedded question, lies among the
# memories it asks about. (Queries from fresh random centres sit equally far from everything; HNSW's recall on
# those fell to ~0.5 at 60k in a side test here, with no bearing on real use.)
CENTRES = np.random.default_rng(20261130).normal(size=(200, DIMS)).astype(np.float32)


def clustered(n: int, rng: np.random.Generator) -> np.ndarray:
    data = CENTRES[rng.integers(0, len(CENTRES), n)] + 0.35 * rng.normal(size=(n, DIMS)).astype(np.float32)
    return (data / np.linalg.norm(data, axis=1, keepdims=True)).astype(np.float32)


def seed_metadata(i: int, rng: np.random.Generator) -> dict[str, Any]:
    return {
        "npcId": f"npc{i % NPCS:03d}",
        "type": ["observation", "dialogue", "diary"][i % 3],
        "day": int(rng.integers(1, 31)),
        "importance": round(float(rng.random()), 3),
        "decayFactor": round(float(rng.random() * 0.2), 3),
        "textPreview": f"memory number {i} about the village"[:200],
    }


def timed(fn: Callable[[], Any], repeats: int) -> tuple[list[float], list[Any]]:
    times, results = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        results.append(fn())
        times.append((time.perf_counter() - start) * 1000)
    return times, results


def pct(times: list[float], q: float) -> float:
    return round(float(np.percentile(times, q)), 3)


def exact_top(matrix: np.ndarray, rows: np.ndarray | None, q: np.ndarray, k: int = 10) -> list[int]:
    sub = matrix if rows is None else matrix[rows]
    scores = sub @ q
    top = np.argpartition(-scores, min(k, len(scores) - 1))[:k]
    top = top[np.argsort(-scores[top])]
    return (top if rows is None else rows[top]).tolist()


def run(n: int, queries: int, raw_queries: int) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    matrix = clustered(n, rng)
    meta = [seed_metadata(i, rng) for i in range(n)]
    ids = [f"m{i}" for i in range(n)]
    work = Path(tempfile.mkdtemp(prefix="bench-vectorize-"))
    report: dict[str, Any] = {"n": n, "dims": DIMS, "npcs": NPCS, "machine": machine()}
    try:
        account = local_vectorize_account(work / "ours")
        account.create_index("memories", DIMS, "cosine")
        index = account.index("memories")
        for prop, kind in METADATA_INDEXES:
            index.create_metadata_index(prop, kind)
        raw = raw_collection(work / "raw")
        ours_s, raw_s = 0.0, 0.0
        for s in range(0, n, BATCH):  # interleaved batch by batch, so both see the same machine load
            batch = [Vector(ids[i], matrix[i], meta[i]) for i in range(s, min(n, s + BATCH))]
            start = time.perf_counter()
            index.upsert(batch)
            middle = time.perf_counter()
            raw.add(ids=ids[s : s + BATCH], embeddings=matrix[s : s + BATCH], metadatas=meta[s : s + BATCH])
            ours_s, raw_s = ours_s + middle - start, raw_s + time.perf_counter() - middle
        report["upsert_per_s"] = {
            "ours": round(n / ours_s),
            "raw_chroma_add": round(n / raw_s),
            "ratio": round(raw_s / ours_s, 3),
        }
        report["queries"] = compare_queries(index, raw, matrix, meta, rng, queries, raw_queries)
        import psutil

        process = psutil.Process(os.getpid())
        report["memory"] = {
            "rss_mb": round(process.memory_info().rss / 2**20, 1),
            "raw_vector_mb": round(matrix.nbytes / 2**20, 1),
        }
        start = time.perf_counter()
        account.close()  # writes the snapshot beside Chroma
        report["close_with_snapshot_s"] = round(time.perf_counter() - start, 3)
        report["reopen"] = reopen_probes(work / "ours", matrix.nbytes)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return report


def reopen_probes(folder: Path, raw_bytes: int) -> dict[str, Any]:
    """Reopen in fresh processes (nothing cached in this one): from the snapshot, then rebuilt from Chroma."""
    snapshot = folder / "snapshots" / "memories.snapshot"
    from_snapshot = probe(folder)
    snapshot.rename(snapshot.with_suffix(".away"))
    rebuilt = probe(folder)
    snapshot.with_suffix(".away").rename(snapshot)
    index_mb = from_snapshot["rss_delta_mb"]
    return {
        "from_snapshot": from_snapshot, "rebuilt_from_chroma": rebuilt,
        "speedup": round(rebuilt["to_first_query_s"] / max(from_snapshot["to_first_query_s"], 1e-6), 1),
        "index_rss_over_raw_vectors": round(index_mb / (raw_bytes / 2**20), 2),
    }


PROBE = "import sys; from memory_sim.bench.vectorize import run_probe; run_probe(sys.argv[1])"


def probe(folder: Path) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", PROBE, str(folder)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_probe(folder: str) -> None:
    """Child process: time from an open account to the first answered query; RSS of the opened index alone."""
    import chromadb  # noqa: F401  (imported before the baseline, so the delta is the index, not the library)
    import psutil

    process = psutil.Process(os.getpid())
    before = process.memory_info().rss
    start = time.perf_counter()
    account = local_vectorize_account(folder)
    client = process.memory_info().rss
    index = account.index("memories")
    index.query([1.0] * DIMS, top_k=10, filter={"npcId": "npc000"})
    elapsed = time.perf_counter() - start
    after = process.memory_info().rss
    print(
        json.dumps(
            {
                "to_first_query_s": round(elapsed, 3),
                "rss_delta_mb": round((after - client) / 2**20, 1),
                "chroma_client_rss_mb": round((client - before) / 2**20, 1),
                "used_snapshot": getattr(index.store, "loaded_from_snapshot", None),
            }
        )
    )


def raw_collection(path: Path) -> Any:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
    return client.create_collection("raw", embedding_function=None, configuration={"hnsw": {"space": "cosine"}})


def compare_queries(
    index: Any,
    raw: Any,
    matrix: np.ndarray,
    meta: list[dict[str, Any]],
    rng: np.random.Generator,
    queries: int,
    raw_queries: int,
) -> dict[str, Any]:
    npc = np.array([int(m["npcId"][3:]) for m in meta])
    day, importance = np.array([m["day"] for m in meta]), np.array([m["importance"] for m in meta])
    Case = Callable[[int], Any]  # an NPC number -> our filter, numpy's rows, Chroma's where
    cases: dict[str, tuple[Case, Case, Case]] = {
        "npcId": (
            lambda p: {"npcId": f"npc{p:03d}"},
            lambda p: np.flatnonzero(npc == p),
            lambda p: {"npcId": f"npc{p:03d}"},
        ),
        "compound": (
            lambda p: {"npcId": f"npc{p:03d}", "day": {"$gte": 3, "$lte": 9}, "importance": {"$gte": 0.5}},
            lambda p: np.flatnonzero((npc == p) & (day >= 3) & (day <= 9) & (importance >= 0.5)),
            lambda p: {
                "$and": [
                    {"npcId": f"npc{p:03d}"},
                    {"day": {"$gte": 3}},
                    {"day": {"$lte": 9}},
                    {"importance": {"$gte": 0.5}},
                ]
            },
        ),
        "none": (lambda p: None, lambda p: None, lambda p: None),
    }
    out = {}
    for name, (vfilter, rows_of, where) in cases.items():
        picks = [(int(rng.integers(0, NPCS)), clustered(1, rng)[0]) for _ in range(queries)]
        # The lambdas below run inside timed_each(), in this iteration (B023 is about calls made later).
        ours_t, ours_r = timed_each(lambda p, q: index.query(q, top_k=10, filter=vfilter(p)), picks)  # noqa: B023
        rows = [rows_of(p) for p, _ in picks]  # numpy's slices are precomputed, as an ideal planner's would be
        slices = iter(rows)
        exact_t, exact_r = timed_each(lambda p, q: exact_top(matrix, next(slices), q), picks)  # noqa: B023
        raw_t, raw_r = timed_each(
            lambda p, q: raw.query(query_embeddings=[q], n_results=10, where=where(p), include=["distances"]),  # noqa: B023
            picks[:raw_queries],
        )
        truth = [{f"m{i}" for i in r} for r in exact_r]
        raw_measured = raw_queries > 0  # 0: raw Chroma was built to a smaller size, so not comparable here
        out[name] = {
            "ours_p50_ms": pct(ours_t, 50), "ours_p95_ms": pct(ours_t, 95),
            "numpy_exact_p50_ms": pct(exact_t, 50), "numpy_exact_p95_ms": pct(exact_t, 95),
            "raw_chroma_p50_ms": pct(raw_t, 50) if raw_measured else None,
            "raw_chroma_p95_ms": pct(raw_t, 95) if raw_measured else None,
            "ours_recall@10": recall([{m.id for m in r.matches} for r in ours_r], truth),
            "raw_chroma_recall@10": recall([set(r["ids"][0]) for r in raw_r], truth[:raw_queries])
            if raw_measured else None,
            "ours_over_numpy_p50": round(pct(ours_t, 50) / max(pct(exact_t, 50), 1e-6), 2),
        }
    return out


def timed_each(
    fn: Callable[[int, np.ndarray], Any], picks: list[tuple[int, np.ndarray]]
) -> tuple[list[float], list[Any]]:
    times, results = [], []
    for p, q in picks:
        start = time.perf_counter()
        results.append(fn(p, q))
        times.append((time.perf_counter() - start) * 1000)
    return times, results


def recall(got: list[set[str]], truth: list[set[str]]) -> float:
    hits = sum(len(g & t) for g, t in zip(got, truth, strict=True))
    return round(hits / max(1, sum(len(t) for t in truth)), 4)


def machine() -> str:
    usable = len(os.sched_getaffinity(0))
    return f"{platform.machine()}, {os.cpu_count()} logical cores ({usable} usable), {platform.python_version()}"


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# Vectorize benchmark: {report['n']:,} x {report['dims']}, {report['npcs']} npcIds",
        "",
        f"Machine: {report['machine']}",
        "",
    ]
    lines += [
        "| query | ours p50 / p95 (ms) | numpy exact p50 / p95 | raw Chroma p50 / p95 | ours recall@10 "
        "| raw Chroma recall@10 | ours / numpy p50 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, q in report["queries"].items():
        lines.append(
            f"| {name} | {q['ours_p50_ms']} / {q['ours_p95_ms']} "
            f"| {q['numpy_exact_p50_ms']} / {q['numpy_exact_p95_ms']} "
            f"| {q['raw_chroma_p50_ms']} / {q['raw_chroma_p95_ms']} | {q['ours_recall@10']} "
            f"| {q['raw_chroma_recall@10']} | {q['ours_over_numpy_p50']}x |"
        )
    u, m, r = report["upsert_per_s"], report["memory"], report["reopen"]
    snap, rebuilt = r["from_snapshot"], r["rebuilt_from_chroma"]
    lines += [
        "",
        f"Upsert (batches of {BATCH}, ours and raw Chroma interleaved batch by batch): ours {u['ours']:,}/s, "
        f"raw Chroma add {u['raw_chroma_add']:,}/s, ratio {u['ratio']}",
        f"Reopen to first answered query (fresh process): {snap['to_first_query_s']} s from the snapshot "
        f"(used: {snap['used_snapshot']}), {rebuilt['to_first_query_s']} s rebuilt from Chroma ({r['speedup']}x); "
        f"close() with the snapshot write: {report['close_with_snapshot_s']} s",
        f"Resident memory of the opened index alone (RSS delta around `index()` + first query in a fresh process): "
        f"{snap['rss_delta_mb']} MB from the snapshot, {rebuilt['rss_delta_mb']} MB rebuilt; raw vector bytes "
        f"{m['raw_vector_mb']} MB ({r['index_rss_over_raw_vectors']}x); the Chroma client itself adds "
        f"{snap['chroma_client_rss_mb']} MB",
        f"Whole bench process (ours + raw Chroma + the generated data): {m['rss_mb']} MB",
        "",
        f"Note: {report['note']}",
        "",
    ]
    return "\n".join(lines)
