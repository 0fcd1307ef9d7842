"""Benchmark: one account's 5,000-vector REST overwrite against another account's latency, on a real server.

    .venv/bin/python scripts/bench_upsert_fairness.py [--vectors N] [--only before|now] [--no-write]

The server (the app `memory-sim serve` builds, under uvicorn with its options) runs in its own process on loopback
with two tokens, one per account, twice in one run, side by side: with each account's Chroma in the server's
process ("before") and in a child process of its own ("now", what `serve` does). Account X has an index
of N vectors (384-d, cosine) and sends ONE REST upsert overwriting all N ids (NDJSON, new values and metadata),
as the Python SDK does. Meanwhile this process asks `/health` and account Y's query (topK 5, 1,000 vectors)
every 100 ms, each on its own thread and kept-alive connection, and records each call's latency. Reported per
probe, over the calls sent while the upsert was in flight: how many, how many answered before it ended, p50,
p95 and worst. Afterwards every overwritten vector is read back (get_by_ids) and compared with what was sent
(ids, float32 values, metadata): nothing acknowledged is lost or different. Bounded: one upsert, probes stop
2 s after it, the server is stopped at the end. Writes benchmarks/upsert_fairness.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory_sim.server.loopback import free_port, wait_until_serving  # noqa: E402

DIMS = 384
X_TOKEN, Y_TOKEN = "token-x", "token-y"
X, Y = "writer", "reader"
Y_VECTORS = 1000
PERIOD_S = 0.1
AFTER_S = 2.0
BATCH = 5000  # REST's limit per write


def ndjson(ids: list[str], values: np.ndarray, round_no: int) -> bytes:
    rows = ({"id": i, "values": v.tolist(), "metadata": {"round": round_no, "name": i}}
            for i, v in zip(ids, values, strict=True))
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


class Probe(threading.Thread):
    """Calls `request` every PERIOD_S (or at once after a slower answer) until stopped; (sent, seconds) per call."""

    def __init__(self, name: str, request: Any) -> None:
        super().__init__(name=name, daemon=True)
        self.request, self.calls = request, []  # type: ignore[var-annotated]
        self.stop = threading.Event()
        self.resets = 0  # connections the server dropped (a stalled loop lets keep-alive lapse): asked again

    def answer(self, client: httpx.Client) -> httpx.Response:
        while True:
            try:
                return self.request(client)  # type: ignore[no-any-return]
            except httpx.TransportError:
                self.resets += 1

    def run(self) -> None:
        with httpx.Client(timeout=120) as client:
            while not self.stop.is_set():
                sent = time.monotonic()
                answer = self.answer(client)
                done = time.monotonic()
                if answer.status_code != 200:
                    raise RuntimeError(f"{self.name}: {answer.status_code} {answer.text[:200]}")
                self.calls.append((sent, done - sent))
                self.stop.wait(max(0.0, PERIOD_S - (done - sent)))


def during(calls: list[tuple[float, float]], start: float, end: float) -> dict[str, Any]:
    inside = [(s, d) for s, d in calls if start <= s < end or (s < start and s + d > start)]
    seconds = sorted(d for _, d in inside)
    if not seconds:
        return {"calls": 0}
    return {"calls": len(seconds), "answered_before_upsert_ended": sum(1 for s, d in inside if s + d < end),
            "p50_ms": round(1000 * seconds[len(seconds) // 2], 1),
            "p95_ms": round(1000 * seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))], 1),
            "worst_ms": round(1000 * seconds[-1], 1)}


def api(port: int, account: str) -> str:
    return f"http://127.0.0.1:{port}/client/v4/accounts/{account}/vectorize/v2/indexes"


def write(port: int, account: str, token: str, body: bytes, kind: str = "upsert") -> httpx.Response:
    return httpx.post(f"{api(port, account)}/idx/{kind}", content=body, timeout=600,
                      headers={"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"})


def setup(port: int, n: int, rng: np.random.Generator) -> list[str]:
    for account, token, count in ((X, X_TOKEN, n), (Y, Y_TOKEN, Y_VECTORS)):
        made = httpx.post(api(port, account), headers={"Authorization": f"Bearer {token}"}, timeout=60,
                          json={"name": "idx", "config": {"dimensions": DIMS, "metric": "cosine"}})
        made.raise_for_status()
        ids = [f"v{i}" for i in range(count)]
        for start in range(0, count, BATCH):
            part = ids[start:start + BATCH]
            write(port, account, token, ndjson(part, rng.standard_normal((len(part), DIMS)), 0), "insert")
    return [f"v{i}" for i in range(n)]


def read_back(port: int, ids: list[str]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    with httpx.Client(timeout=120, headers={"Authorization": f"Bearer {X_TOKEN}"}) as client:
        for start in range(0, len(ids), 20):  # production's get_by_ids cap
            answer = client.post(f"{api(port, X)}/idx/get_by_ids", json={"ids": ids[start:start + 20]})
            answer.raise_for_status()
            found.update({v["id"]: v for v in answer.json()["result"]})
    return found


def check_same(found: dict[str, Any], ids: list[str], values: np.ndarray) -> dict[str, int]:
    missing = sum(1 for i in ids if i not in found)
    sent32 = values.astype(np.float32)
    wrong_values = sum(1 for k, i in enumerate(ids) if i in found
                       and not np.array_equal(np.asarray(found[i]["values"], dtype=np.float32), sent32[k]))
    wrong_metadata = sum(1 for i in ids if i in found and found[i].get("metadata") != {"round": 1, "name": i})
    return {"missing": missing, "wrong_values": wrong_values, "wrong_metadata": wrong_metadata}


SERVER = """
import sys, uvicorn
from memory_sim.builder.server import build_server_app
from memory_sim.server.slow_requests import uvicorn_options
folder, port, tokens, own = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
app = build_server_app(folder, tokens, d1_engine="sqlite", chroma_own_process=own)
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", **uvicorn_options())
"""
VARIANTS = {"before": False, "now": True}  # Chroma in a process of its own?
LABELS = {"before": "Chroma in the server's process (before)", "now": "Chroma in a child process per account (now)"}


def run(n: int, seed: int, own_process: bool) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    port = free_port()
    folder = tempfile.mkdtemp(prefix="upsert-fairness-")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", SERVER, folder, str(port), f"{X_TOKEN}:{X},{Y_TOKEN}:{Y}", str(int(own_process))]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_serving(port, server)
        ids = setup(port, n, rng)
        query = {"vector": rng.standard_normal(DIMS).tolist(), "topK": 5}
        health = Probe("health", lambda c: c.get(f"http://127.0.0.1:{port}/health"))
        reader = Probe("y-query", lambda c: c.post(f"{api(port, Y)}/idx/query", json=query,
                                                   headers={"Authorization": f"Bearer {Y_TOKEN}"}))
        new_values = rng.standard_normal((n, DIMS))
        body = ndjson(ids, new_values, 1)
        health.start(), reader.start()
        time.sleep(1.0)  # both probes warm
        load = os.getloadavg()[0]
        start = time.monotonic()
        answer = write(port, X, X_TOKEN, body)
        end = time.monotonic()
        answer.raise_for_status()
        time.sleep(AFTER_S)
        for probe in (health, reader):
            probe.stop.set()
            probe.join(timeout=120)
        same = check_same(read_back(port, ids), ids, new_values)
        return {"chroma": LABELS["now" if own_process else "before"],
                "vectors": n, "upsert_s": round(end - start, 2), "load_1min": round(load, 2),
                "mutation": answer.json()["result"],
                "health": {**during(health.calls, start, end), "resets": health.resets},
                "y_query": {**during(reader.calls, start, end), "resets": reader.resets}, "read_back": same}
    finally:
        server.terminate()
        server.wait(timeout=120)
        shutil.rmtree(folder, ignore_errors=True)


def markdown(rows: dict[str, Any]) -> str:
    lines = ["# One account's 5,000-vector overwrite against another account's latency", "",
             "Written by `scripts/bench_upsert_fairness.py`: the app `memory-sim serve` builds, under uvicorn with its "
             "options, in its own process on loopback, with each account's Chroma in the server's process (before) "
             "and in a child process (now), side by side in one run; "
             "account X sends one REST upsert overwriting N existing ids (384-d); `/health` and account Y's query "
             "are asked every 100 ms meanwhile. Calls counted: those in flight while the upsert was (a call whose "
             "connection the server dropped is asked again, timed from its first try); load: the "
             "machine's 1-minute load average as the upsert started. "
             f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared).", "",
             "| version | N | upsert s | load | /health calls (answered during) | /health p95 / worst ms "
             "| Y calls (answered during) | Y p95 / worst ms | read back: missing / wrong values / wrong metadata |",
             "|---|---|---|---|---|---|---|---|---|"]
    for label, r in rows.items():
        h, y, b = r["health"], r["y_query"], r["read_back"]
        lines.append(f"| {LABELS[label]} | {r['vectors']} | {r['upsert_s']} | {r['load_1min']} "
                     f"| {h['calls']} ({h.get('answered_before_upsert_ended', 0)}) "
                     f"| {h.get('p95_ms')} / {h.get('worst_ms')} "
                     f"| {y['calls']} ({y.get('answered_before_upsert_ended', 0)}) "
                     f"| {y.get('p95_ms')} / {y.get('worst_ms')} "
                     f"| {b['missing']} / {b['wrong_values']} / {b['wrong_metadata']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vectors", type=int, default=5000)
    parser.add_argument("--only", choices=sorted(VARIANTS), help="one variant (default: both, before first)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-write", action="store_true", help="print only; benchmarks/ untouched")
    args = parser.parse_args()
    rows = {}
    for name in [args.only] if args.only else list(VARIANTS):
        rows[name] = run(args.vectors, args.seed, VARIANTS[name])
        print(name, json.dumps(rows[name]), flush=True)
    if args.no_write:
        return
    path = ROOT / "benchmarks" / "upsert_fairness.json"
    path.write_text(json.dumps(rows, indent=1) + "\n")
    path.with_suffix(".md").write_text(markdown(rows))


if __name__ == "__main__":
    main()
