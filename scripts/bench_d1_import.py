"""A D1 import as wrangler drives it (init, PUT the file, ingest), against `memory-sim serve` in its own process:
statements per second and the server's peak RSS (VmHWM) for files of the given sizes, on the given engines.

    .venv/bin/python scripts/bench_d1_import.py                         # 10 MB and 100 MB, sqlite and duckdb
    .venv/bin/python scripts/bench_d1_import.py --sizes-mb 10 --engines sqlite

The file is a table and rows of `INSERT INTO memories VALUES (...);`, one a line (~85 bytes each, text with
quotes and semicolons), as `wrangler d1 export` writes them. Writes benchmarks/d1_import.{json,md}.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory_sim.server.loopback import free_port, wait_until_serving  # noqa: E402

TOKEN = "bench-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SCHEMA = "CREATE TABLE memories (id INTEGER PRIMARY KEY, npc TEXT, content TEXT, importance REAL, day INTEGER);\n"


def write_file(path: Path, megabytes: float, rows_per_insert: int = 1) -> int:
    """The SQL file, `megabytes` MB (10^6 bytes) long; returns its statement count. `rows_per_insert` > 1: a
    hand-written file's shape, `INSERT INTO memories VALUES (...), (...), ...` with that many rows each."""
    target, count, statements = int(megabytes * 1_000_000), 1, 1
    with open(path, "w", encoding="utf-8") as out:
        out.write(SCHEMA)
        size = len(SCHEMA)
        while size < target:
            rows = [f"({n}, 'npc-{n % 50}', 'Tom''s note {n}; the mill', {n % 97 / 97:.4f}, {n % 365})"
                    for n in range(count, count + rows_per_insert)]
            line = f"INSERT INTO memories VALUES {', '.join(rows)};\n"
            out.write(line)
            size += len(line)
            count += rows_per_insert
            statements += 1
    return statements


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def current_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc/PID/stat): what the ingest cost whatever the load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(engine: str, megabytes: float, folder: Path, rows_per_insert: int = 1) -> dict[str, object]:
    sql_path = folder / f"import-{megabytes:g}MB.sql"
    statements = write_file(sql_path, megabytes, rows_per_insert)
    port = free_port()
    data = folder / f"data-{engine}-{megabytes:g}"
    command = [sys.executable, "-c", "import sys; from memory_sim.cli import main; sys.exit(main())",
               "--data", str(data), "serve", "--port", str(port), "--d1-engine", engine, "--log-level", "warning"]
    env = {**os.environ, "MEMORY_SIM_API_TOKEN": TOKEN, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/client/v4/accounts/bench/d1/database"
    try:
        try:
            wait_until_serving(port, server, timeout_s=120)
        except RuntimeError as exc:
            raise SystemExit(f"the server did not start: {exc}") from None
        database = httpx.post(base, headers=AUTH, json={"name": "db"}).json()["result"]["uuid"]
        digest = hashlib.md5(usedforsecurity=False)
        with open(sql_path, "rb") as source:
            for chunk in iter(lambda: source.read(1 << 20), b""):
                digest.update(chunk)
        etag = digest.hexdigest()
        init = httpx.post(f"{base}/{database}/import", headers=AUTH, json={"action": "init", "etag": etag}).json()
        with open(sql_path, "rb") as source:
            put = httpx.put(init["result"]["upload_url"], content=iter(lambda: source.read(1 << 20), b""),
                            timeout=600)
        assert put.status_code == 200, put.text
        before = current_rss_mb(server.pid)
        cpu_before = cpu_seconds(server.pid)
        started = time.perf_counter()
        answer = httpx.post(f"{base}/{database}/import", headers=AUTH, timeout=7200, json={
            "action": "ingest", "etag": etag, "filename": init["result"]["filename"]}).json()
        seconds = time.perf_counter() - started
        cpu = cpu_seconds(server.pid) - cpu_before
        assert answer["result"]["status"] == "complete", answer
        ran = answer["result"]["result"]["num_queries"]
        assert ran == statements, (ran, statements)
        peak = peak_rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=60)
        sql_path.unlink(missing_ok=True)
    return {"engine": engine, "file_mb": megabytes, "rows_per_insert": rows_per_insert, "statements": statements,
            "seconds": round(seconds, 2),
            "statements_per_s": round(statements / seconds), "server_cpu_s": round(cpu, 2),
            "statements_per_cpu_s": round(statements / cpu), "load_average": os.getloadavg()[0],
            "rss_before_ingest_mb": round(before, 1),
            "peak_rss_mb": round(peak, 1)}


def report(rows: list[dict[str, object]]) -> str:
    lines = ["# D1 import through `memory-sim serve` (init, PUT, ingest)", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} CPUs (shared), Python {platform.python_version()}; "
             "the server's peak RSS is its VmHWM (the whole process: models, Chroma, the engine). Each statement "
             "is one row. On a shared machine the wall-clock rate depends on the load (the 1-minute load average "
             "as the ingest ended is given); the rate per CPU second of the server does not.", "",
             "| engine | file | statements | ingest s | statements/s | server CPU s | statements per CPU s | load "
             "| RSS before ingest MB | peak RSS MB |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['engine']} | {r['file_mb']} MB | {r['statements']:,} | {r['seconds']} | "
                     f"{r['statements_per_s']:,} | {r['server_cpu_s']} | {r['statements_per_cpu_s']:,} | "
                     f"{r['load_average']:.1f} | {r['rss_before_ingest_mb']} | {r['peak_rss_mb']} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", default="10,100")
    parser.add_argument("--engines", default="sqlite,duckdb")
    parser.add_argument("--rows-per-insert", type=int, default=1, help="> 1: a hand-written file's multi-row INSERTs")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-d1-import-") as folder:
        for engine in args.engines.split(","):
            for size in args.sizes_mb.split(","):
                row = measure(engine, float(size), Path(folder), args.rows_per_insert)
                print(json.dumps(row), flush=True)
                rows.append(row)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "d1_import.json").write_text(json.dumps(rows, indent=2) + "\n")
    (args.out / "d1_import.md").write_text(report(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
