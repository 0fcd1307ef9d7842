"""Benchmark of the local Cloudflare API server (issue 6): what the HTTP layer adds to a Vectorize query, and
8 concurrent SDK clients on loopback for a bounded time.

    .venv/bin/python scripts/bench_server.py [--quick]   # --quick: fewer vectors and queries, 5 s of load

One run measures side by side, on the same Chroma-backed index object (adopted by the server, so both paths
search the same data): the in-process `index.query`, the official SDK's `vectorize.indexes.query` through the
server, and this project's `CloudflareVectorizeIndex.query` through the server. The server runs in a thread of
this process (uvicorn, loopback only), so clients and server share the GIL: a conservative setting.
Writes benchmarks/server.json and benchmarks/server.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory_sim.bindings.vectorize import Vector  # noqa: E402
from memory_sim.local.vectorize_chroma import ChromaAccount  # noqa: E402
from memory_sim.server.testing import TEST_TOKEN, ServerForTests  # noqa: E402

DIMS = 384


def percentile(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples), q))


def timed(call: Callable[[], Any], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        out.append((time.perf_counter() - started) * 1000.0)
    return out


def populate(account: ChromaAccount, n: int, rng: np.random.Generator) -> None:
    account.create_index("bench", DIMS, "cosine")
    index = account.index("bench")
    index.create_metadata_index("npcId", "string")
    values = rng.standard_normal((n, DIMS)).astype(np.float32)
    for start in range(0, n, 1000):
        index.upsert([Vector(f"v{i}", values[i], {"npcId": f"npc{i % 50}"}) for i in range(start, min(n, start + 1000))])


def load(server: ServerForTests, account_id: str, queries: np.ndarray, seconds: float, clients: int) -> dict[str, Any]:
    import cloudflare

    stop_at = time.monotonic() + seconds
    counts = [0] * clients
    errors = [0] * clients
    latencies: list[list[float]] = [[] for _ in range(clients)]

    def worker(k: int) -> None:
        sdk = cloudflare.Cloudflare(api_token=TEST_TOKEN, base_url=server.base_url, max_retries=0)
        i = k
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            try:
                sdk.vectorize.indexes.query("bench", account_id=account_id, vector=queries[i % len(queries)].tolist(),
                                            top_k=5, filter={"npcId": f"npc{i % 50}"})
                counts[k] += 1
            except Exception:  # counted, not raised: the figure is the error count
                errors[k] += 1
            latencies[k].append((time.perf_counter() - started) * 1000.0)
            i += clients
        sdk.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    flat = [x for xs in latencies for x in xs]
    return {"clients": clients, "seconds": round(elapsed, 2), "requests": sum(counts), "errors": sum(errors),
            "throughput_qps": round(sum(counts) / elapsed, 1), "p50_ms": round(percentile(flat, 50), 2),
            "p99_ms": round(percentile(flat, 99), 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n, repeats, seconds = (2_000, 200, 5.0) if args.quick else (20_000, 1000, 60.0)
    rng = np.random.default_rng(0)
    queries = rng.standard_normal((64, DIMS)).astype(np.float32)
    import cloudflare

    from memory_sim.cloudflare.vectorize import CloudflareVectorizeAccount

    with tempfile.TemporaryDirectory() as tmp, ServerForTests(Path(tmp) / "server") as server:
        local = ChromaAccount(Path(tmp) / "chroma")
        populate(local, n, rng)
        adapter: CloudflareVectorizeAccount = server.adopt(local)
        account_id = adapter.client.account_id
        index, remote = local.index("bench"), adapter.index("bench")
        sdk = cloudflare.Cloudflare(api_token=TEST_TOKEN, base_url=server.base_url, max_retries=0)
        q = [queries[i % 64].tolist() for i in range(repeats)]
        it = iter(range(10**9))
        flt = {"npcId": "npc7"}
        rows = {
            "in-process index.query": timed(lambda: index.query(q[next(it) % repeats], top_k=5, filter=flt), repeats),
            "SDK vectorize.indexes.query via server": timed(
                lambda: sdk.vectorize.indexes.query("bench", account_id=account_id, vector=q[next(it) % repeats], top_k=5, filter=flt), repeats),
            "CloudflareVectorizeIndex.query via server": timed(lambda: remote.query(q[next(it) % repeats], top_k=5, filter=flt), repeats),
        }
        sdk.close()
        concurrent = load(server, account_id, queries, seconds, clients=8)
        local.close()
    base = statistics.median(rows["in-process index.query"])
    table = [{"path": name, "p50_ms": round(statistics.median(xs), 3), "p99_ms": round(percentile(xs, 99), 3),
              "added_p50_ms": round(statistics.median(xs) - base, 3), "ratio_p50": round(statistics.median(xs) / base, 1)}
             for name, xs in rows.items()]
    result = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
              "vectors": n, "dimensions": DIMS, "repeats": repeats, "filter": flt, "latency": table,
              "concurrent": concurrent, "quick": args.quick, "goal_added_p50_ms": 2.0}
    out = ROOT / "benchmarks"
    out.mkdir(exist_ok=True)
    name = "server-quick" if args.quick else "server"
    (out / f"{name}.json").write_text(json.dumps(result, indent=2))
    lines = [f"# Local Cloudflare API server ({n} vectors x {DIMS}, cosine, npcId filter; {os.cpu_count()} CPUs)", "",
             "| path | p50 ms | p99 ms | added p50 ms | ratio |", "|---|---|---|---|---|"]
    lines += [f"| {r['path']} | {r['p50_ms']} | {r['p99_ms']} | {r['added_p50_ms']} | {r['ratio_p50']}x |" for r in table]
    c = concurrent
    lines += ["", f"8 concurrent SDK clients for {c['seconds']} s: {c['requests']} queries, {c['errors']} errors, "
              f"{c['throughput_qps']} queries/s, p50 {c['p50_ms']} ms, p99 {c['p99_ms']} ms.", ""]
    (out / f"{name}.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
