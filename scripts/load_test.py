"""Bounded mixed load (remember / recall / retry job) with 8 threads in one process (Chroma + DuckDB, hashing
embedder) and 8 clients of the local server; writes the figures under 'load' in benchmarks/reliability.json.

    .venv/bin/python scripts/load_test.py --seconds 20 --out benchmarks/reliability.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "reliability"), str(ROOT / "tests" / "memory")]


def in_process(seconds: float, folder: Path) -> dict[str, object]:
    from load import run_load

    from memory_sim.check import check
    from memory_sim.embedding.fake import HashingEmbedder
    from memory_sim.env import Env
    from memory_sim.memory.ledger import store
    from memory_sim.memory.system import MemorySystem
    from memory_sim.sim.clock import SimClock

    clock = SimClock()
    with Env.local(folder, embedder=HashingEmbedder(64)) as env:
        system = MemorySystem(env, clock=clock)
        report = run_load([system] * 8, seconds=seconds, seed=1)
        consistent = report.acked == {m.id for m in store.all_memories(env.DB)}
        system.retry_pending(clock() + 86400)
        clean = check(env).clean
    return summary(report, consistent, clean)


def over_server(seconds: float, folder: Path) -> dict[str, object]:
    from load import run_load, server_clients

    from memory_sim.memory.ledger import store
    from memory_sim.testing import ServerForTests

    with ServerForTests(folder, d1_engine="duckdb") as server:
        systems, db = server_clients(server, server.fresh_account_id())
        report = run_load(systems, seconds=seconds, seed=2)
        consistent = report.acked == {m.id for m in store.all_memories(db)}
    return summary(report, consistent, None)


def summary(report: object, consistent: bool, clean: bool | None) -> dict[str, object]:
    r = report  # LoadReport
    return {"workers": r.workers, "seconds": round(r.seconds, 1), "remembered": r.remembered, "recalls": r.recalls,  # type: ignore[attr-defined]
            "jobs": r.jobs, "errors": len(r.errors), "first_errors": r.errors[:3], "foreign_recalls": r.foreign,  # type: ignore[attr-defined]
            "operations_per_s": round(r.operations_per_s, 1), "counts_consistent": consistent, "drift_free": clean}  # type: ignore[attr-defined]


def main() -> int:
    parser = argparse.ArgumentParser(description="bounded mixed load, in process and over the local server")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = {"threads_in_process": in_process(args.seconds, Path(tmp) / "local"),
                  "server_clients": over_server(args.seconds, Path(tmp) / "server"), "machine": "2 shared cores"}
    print(json.dumps(result, indent=2))
    if args.out:
        merged = json.loads(args.out.read_text()) if args.out.exists() else {}
        merged["load"] = result
        args.out.write_text(json.dumps(merged, indent=2) + "\n")
    ok = all(part["errors"] == 0 and part["counts_consistent"] for part in (result["threads_in_process"], result["server_clients"]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
