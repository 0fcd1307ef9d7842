"""Benchmark of the local Cloudflare API server: its own share of a Vectorize query, and 8 concurrent SDK clients.

    .venv/bin/python scripts/bench_server.py [--quick] [--sessions N] [--pause-s S] [--load-s S]

Goal: the server's own share of a query (HTTP in, answer out) p50 <= 1 ms at 20,000 vectors (384-d, cosine, one
`npcId` filter, as the memory system queries). Share = p50 of a plain httpx POST on a kept-alive loopback
connection to `memory-sim serve` (uvicorn with its standard config, in its OWN process) minus p50 of the same
query in process, on a byte-for-byte copy of the served index. The official `cloudflare` SDK's typed call through
the same server is reported beside it, with its client-side work alone (transport mocked); it has no budget.

Paths are timed interleaved (every round calls every path once, in a rotated order, after a warm-up), so load
on a shared machine hits them alike; `--sessions` sessions `--pause-s` apart are each reported on their own.
Rows: in-process `index.query`; plain httpx to a bare ASGI app under the same uvicorn (HTTP + loopback alone);
plain httpx to the server; the same at topK 100 (hybrid recall's candidates) against its in-process twin; the
SDK's typed query through the server and with its transport mocked; this project's adapter through the server.
Writes benchmarks/server[-quick].{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
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
from memory_sim.local.vectorize.chroma import ChromaAccount  # noqa: E402
from memory_sim.server.loopback import free_port  # noqa: E402

DIMS = 384
TOKEN = "bench-token"
ACCOUNT = "bench"
NPCS = 50
GOAL_MS = 1.0
IN_PROCESS, FLOOR, SERVED = "in-process index.query", "plain httpx, bare ASGI app under uvicorn", "plain httpx via server"
IN_PROCESS_100, SERVED_100 = "in-process index.query, topK 100", "plain httpx via server, topK 100"
SDK_MOCKED, SDK_SERVED = "SDK typed query, transport mocked", "SDK typed query via server"
ADAPTER_SERVED = "CloudflareVectorizeIndex.query via server"
TWINS = {SERVED: IN_PROCESS, SERVED_100: IN_PROCESS_100, FLOOR: IN_PROCESS, SDK_SERVED: IN_PROCESS,
         ADAPTER_SERVED: IN_PROCESS}  # each served row against the in-process query it repeats


def interleaved(paths: dict[str, Callable[[], Any]], repeats: int, warmup: int = 30) -> dict[str, list[float]]:
    """Each path `repeats` times, one call of every path per round in a rotated order, so load on a shared
    machine falls on all paths alike; milliseconds per call."""
    for call in paths.values():
        for _ in range(warmup):
            call()
    names = list(paths)
    out: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names):] + names[: r % len(names)]:
            call = paths[name]
            started = time.perf_counter()
            call()
            out[name].append((time.perf_counter() - started) * 1000.0)
    return out


def populate(account: ChromaAccount, n: int, rng: np.random.Generator) -> None:
    account.create_index("bench", DIMS, "cosine")
    index = account.index("bench")
    index.create_metadata_index("npcId", "string")
    values = rng.standard_normal((n, DIMS)).astype(np.float32)
    for start in range(0, n, 1000):
        index.upsert([Vector(f"v{i}", values[i], {"npcId": f"npc{i % NPCS}"}) for i in range(start, min(n, start + 1000))])


def wait_until_up(process: subprocess.Popen[bytes], probe: Callable[[], Any], what: str) -> None:
    import httpx

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            probe()
            return
        except httpx.TransportError:
            time.sleep(0.1)  # the server process is still starting
    process.kill()
    raise SystemExit(f"{what} did not start")


def start_server(data: Path, code: Path | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """`memory-sim serve` in its own process, as a user starts it; from the package in `code` when given."""
    import httpx

    port = free_port()
    command = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())",
               "--data", str(data), "serve", "--port", str(port), "--token", TOKEN, "--log-level", "warning"]
    env = None if code is None else {**os.environ, "PYTHONPATH": str(code)}
    process = subprocess.Popen(command, cwd=code or ROOT, env=env)
    wait_until_up(process, lambda: httpx.get(f"http://127.0.0.1:{port}/health").raise_for_status(), "the server")
    return process, f"http://127.0.0.1:{port}/client/v4"


FLOOR_APP = """
import sys, uvicorn
ANSWER = sys.argv[2].encode()
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(ANSWER)).encode())]})
    await send({"type": "http.response.body", "body": ANSWER})
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def start_floor(answer: bytes) -> tuple[subprocess.Popen[bytes], str]:
    """A bare ASGI app under the same uvicorn (own process) answering fixed bytes: HTTP + loopback alone."""
    import httpx

    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", FLOOR_APP, str(port), answer.decode()], cwd=ROOT)
    url = f"http://127.0.0.1:{port}/floor"
    wait_until_up(process, lambda: httpx.post(url, content=b"{}"), "the floor server")
    return process, url


def mocked_sdk(answer: bytes) -> Any:
    """The SDK over a transport that answers at once: what the SDK costs on the client side alone."""
    import cloudflare
    import httpx

    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=answer, headers={"content-type": "application/json"}))
    return cloudflare.Cloudflare(api_token=TOKEN, base_url="http://mock/client/v4", max_retries=0,
                                 http_client=httpx.Client(transport=transport))


def sockets_used(sdk: Any, calls: int, vector: list[float]) -> int:
    """Distinct client sockets over `calls` typed SDK queries: 1 when keep-alive is reused."""
    seen = set()
    for _ in range(calls):
        reply = sdk.vectorize.indexes.with_raw_response.query("bench", account_id=ACCOUNT, vector=vector, top_k=5)
        seen.add(reply.http_response.extensions["network_stream"].get_extra_info("client_addr"))
    return len(seen)


def load(base_url: str, queries: np.ndarray, seconds: float, clients: int) -> dict[str, Any]:
    """`clients` threads each querying through its own SDK client for `seconds`."""
    import cloudflare

    stop_at = time.monotonic() + seconds
    counts, errors = [0] * clients, [0] * clients
    latencies: list[list[float]] = [[] for _ in range(clients)]

    def worker(k: int) -> None:
        sdk = cloudflare.Cloudflare(api_token=TOKEN, base_url=base_url, max_retries=0)
        i = k
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            try:
                sdk.vectorize.indexes.query("bench", account_id=ACCOUNT, vector=queries[i % len(queries)].tolist(),
                                            top_k=5, filter={"npcId": f"npc{i % NPCS}"})
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
    flat = np.asarray([x for xs in latencies for x in xs])
    return {"clients": clients, "seconds": round(elapsed, 2), "requests": sum(counts), "errors": sum(errors),
            "throughput_qps": round(sum(counts) / elapsed, 1), "p50_ms": round(float(np.percentile(flat, 50)), 2),
            "p99_ms": round(float(np.percentile(flat, 99)), 2)}


def session_table(rows: dict[str, list[float]]) -> list[dict[str, Any]]:
    """p50/p99 per path, and what each served path adds over its in-process twin's p50."""
    p50 = {name: statistics.median(xs) for name, xs in rows.items()}
    return [{"path": name, "p50_ms": round(p50[name], 3), "p99_ms": round(float(np.percentile(xs, 99)), 3),
             "added_p50_ms": round(p50[name] - p50[TWINS[name]], 3) if name in TWINS else None}
            for name, xs in rows.items()]


def shares_of(table: list[dict[str, Any]]) -> dict[str, float]:
    """The server's own share (the goal), and where the rest of a typed SDK query goes, from one session's p50s."""
    p50 = {r["path"]: r["p50_ms"] for r in table}
    return {"server_share_ms": round(p50[SERVED] - p50[IN_PROCESS], 3),
            "server_share_top100_ms": round(p50[SERVED_100] - p50[IN_PROCESS_100], 3),
            "http_floor_ms": round(p50[FLOOR], 3),
            "sdk_client_side_ms": round(p50[SDK_SERVED] - p50[SERVED], 3),
            "sdk_mocked_ms": p50[SDK_MOCKED]}


def against_row(code: str) -> str:
    TWINS[f"plain httpx via server from {code}"] = IN_PROCESS
    return f"plain httpx via server from {code}"


def timed_paths(base_url: str, index: Any, queries: np.ndarray, answer_floor: str,
                against: dict[str, str]) -> dict[str, Callable[[], Any]]:
    import cloudflare
    import httpx

    from memory_sim.cloudflare.client import CloudflareClient
    from memory_sim.cloudflare.vectorize import CloudflareVectorizeAccount

    raw = httpx.Client(headers={"authorization": f"Bearer {TOKEN}", "content-type": "application/json"})
    url = f"{base_url}/accounts/{ACCOUNT}/vectorize/v2/indexes/bench/query"
    q = [queries[i % len(queries)].tolist() for i in range(len(queries))]
    flt = {"npcId": "npc7"}
    bodies = {k: [json.dumps({"vector": v, "topK": k, "filter": flt}).encode() for v in q] for k in (5, 100)}
    sdk = cloudflare.Cloudflare(api_token=TOKEN, base_url=base_url, max_retries=0)
    mock = mocked_sdk(raw.post(url, content=bodies[5][0]).content)
    remote = CloudflareVectorizeAccount(CloudflareClient(ACCOUNT, TOKEN, base_url)).index("bench")
    turn = iter(range(10**9))
    paths: dict[str, Callable[[], Any]] = {
        IN_PROCESS: lambda: index.query(q[next(turn) % len(q)], top_k=5, filter=flt),
        FLOOR: lambda: raw.post(answer_floor, content=bodies[5][next(turn) % len(q)]).json(),
        SERVED: lambda: raw.post(url, content=bodies[5][next(turn) % len(q)]).json(),
        IN_PROCESS_100: lambda: index.query(q[next(turn) % len(q)], top_k=100, filter=flt),
        SERVED_100: lambda: raw.post(url, content=bodies[100][next(turn) % len(q)]).json(),
        SDK_MOCKED: lambda: mock.vectorize.indexes.query("bench", account_id=ACCOUNT, vector=q[next(turn) % len(q)], top_k=5, filter=flt),
        SDK_SERVED: lambda: sdk.vectorize.indexes.query("bench", account_id=ACCOUNT, vector=q[next(turn) % len(q)], top_k=5, filter=flt),
        ADAPTER_SERVED: lambda: remote.query(q[next(turn) % len(q)], top_k=5, filter=flt),
    }
    for code, other in against.items():  # the same request to servers running other code, in the same rounds
        paths[against_row(code)] = lambda u=f"{other}/accounts/{ACCOUNT}/vectorize/v2/indexes/bench/query": raw.post(
            u, content=bodies[5][next(turn) % len(q)]).json()
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 vectors, 300 queries per path, 1 session, 5 s of load")
    parser.add_argument("--sessions", type=int, help="timed sessions, spread over time (default 3; 1 with --quick)")
    parser.add_argument("--pause-s", type=float, default=30.0, help="idle seconds between sessions")
    parser.add_argument("--load-s", type=float, help="seconds of 8-client load (default 30; 5 with --quick)")
    parser.add_argument("--against", type=Path, action="append", default=[],
                        help="a folder holding another version's memory_sim package (`git archive REV memory_sim | "
                        "tar -x -C DIR`): serve it too and time it in the same rounds (repeatable)")
    args = parser.parse_args()
    sessions = args.sessions or (1 if args.quick else 3)
    n, repeats = (2_000, 300) if args.quick else (20_000, 1000)
    seconds = args.load_s if args.load_s is not None else (5.0 if args.quick else 30.0)
    load_before = os.getloadavg()
    rng = np.random.default_rng(0)
    queries = rng.standard_normal((64, DIMS)).astype(np.float32)
    import cloudflare
    import httpx

    with tempfile.TemporaryDirectory() as tmp:
        served = Path(tmp) / "server" / "accounts" / ACCOUNT / "vectorize"
        written = ChromaAccount(served)
        populate(written, n, rng)
        written.close()
        shutil.copytree(served, Path(tmp) / "local")
        local = ChromaAccount(Path(tmp) / "local")
        process, base_url = start_server(Path(tmp) / "server")
        floor_process, others, against_urls = None, [], {}
        try:
            for k, code in enumerate(args.against):
                shutil.copytree(Path(tmp) / "server", Path(tmp) / f"against-{k}")
                other_process, against_urls[str(code)] = start_server(Path(tmp) / f"against-{k}", code.resolve())
                others.append(other_process)
            sample = httpx.post(f"{base_url}/accounts/{ACCOUNT}/vectorize/v2/indexes/bench/query",
                                json={"vector": queries[0].tolist(), "topK": 5, "filter": {"npcId": "npc7"}},
                                headers={"authorization": f"Bearer {TOKEN}"}).content
            floor_process, floor_url = start_floor(sample)
            with cloudflare.Cloudflare(api_token=TOKEN, base_url=base_url, max_retries=0) as sdk:
                sockets = sockets_used(sdk, 50, queries[0].tolist())
            paths = timed_paths(base_url, local.index("bench"), queries, floor_url, against_urls)
            timed = []
            for k in range(sessions):
                if k:
                    time.sleep(args.pause_s)  # the VM's speed drifts over minutes: sample it at several times
                timed.append(interleaved(paths, repeats))
            for idle in (floor_process, *others):
                idle.terminate()
            concurrent = load(base_url, queries, seconds, clients=8)
        finally:
            for running in (floor_process, *others, process):
                if running is not None:
                    running.terminate()
                    running.wait(timeout=30)
            local.close()
    tables = [session_table(rows) for rows in timed]
    result = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
              "vectors": n, "dimensions": DIMS, "repeats": repeats, "filter": {"npcId": "npc7"}, "pause_s": args.pause_s,
              "server": "memory-sim serve in its own process (uvicorn, standard config)", "goal_server_share_p50_ms": GOAL_MS,
              "sessions": [{"latency": t, "shares_p50_ms": shares_of(t)} for t in tables], "concurrent": concurrent,
              "quick": args.quick, "sdk_sockets_over_50_calls": sockets, "load_average_before": load_before,
              "against": [str(code) for code in args.against]}
    out = ROOT / "benchmarks"
    out.mkdir(exist_ok=True)
    name = "server-quick" if args.quick else "server"
    text = report(result, tables)
    (out / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / f"{name}.md").write_text(text)
    print(text)


def report(result: dict[str, Any], tables: list[list[dict[str, Any]]]) -> str:
    n = len(tables)
    lines = [f"# Local Cloudflare API server ({result['vectors']:,} vectors x {DIMS}, cosine, npcId filter; "
             f"{os.cpu_count()} CPUs; server in its own process; paths interleaved call by call; {n} timed session(s) "
             f"{result['pause_s']:g} s apart)", "",
             "p50 ms per session (in brackets: added over the same query in process):", "",
             "| path | " + " | ".join(f"session {k + 1}" for k in range(n)) + " |", "|---|" + "---|" * n]
    for i, row in enumerate(tables[0]):
        cells = [f"{t[i]['p50_ms']}" + (f" ({t[i]['added_p50_ms']:+})" if t[i]["added_p50_ms"] is not None else "")
                 for t in tables]
        lines.append(f"| {row['path']} | " + " | ".join(cells) + " |")
    shares = [shares_of(t) for t in tables]
    met = sum(s["server_share_ms"] <= GOAL_MS for s in shares)
    lines += ["", f"**Goal: the server's own share (plain httpx via server minus in process) p50 <= {GOAL_MS:g} ms**: "
              + ", ".join(f"{s['server_share_ms']} ms" for s in shares) + f"; met in {met} of {n} session(s). "
              "At topK 100: " + ", ".join(f"{s['server_share_top100_ms']} ms" for s in shares) + ".", "",
              "Reported beside it, no budget: the official SDK's typed call adds "
              + ", ".join(f"{s['sdk_client_side_ms']} ms" for s in shares) + " over plain httpx through the same "
              "server; its client work alone (transport mocked) is " + ", ".join(f"{s['sdk_mocked_ms']} ms" for s in shares)
              + ". A bare ASGI app under the same uvicorn (HTTP + loopback, no work) answers in "
              + ", ".join(f"{s['http_floor_ms']} ms" for s in shares) + ".", ""]
    for code in result["against"]:
        added = [next(r["added_p50_ms"] for r in t if r["path"] == against_row(code)) for t in tables]
        lines += [f"The same request to `memory-sim serve` running the code in {code} (same rounds): "
                  + ", ".join(f"{a} ms" for a in added) + " over the in-process query.", ""]
    c = result["concurrent"]
    lines += [f"The typed SDK used {result['sdk_sockets_over_50_calls']} client socket(s) over 50 calls (keep-alive "
              f"reused). Load average (1 min) before the run: {result['load_average_before'][0]:.2f}.", "",
              f"8 concurrent SDK clients for {c['seconds']} s: {c['requests']} queries, {c['errors']} errors, "
              f"{c['throughput_qps']} queries/s, p50 {c['p50_ms']} ms, p99 {c['p99_ms']} ms.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
