"""The demo's D1 work alone, on two versions of the code: every D1 call `memory-sim demo` makes (statements and
batches, in order) recorded once, then replayed on a fresh database by each tree in turn, in fresh processes,
alternating; the CPU seconds of the replaying thread and the wall seconds, medians over the rounds. Without the
model and the index beside it, the D1 engine's own cost shows with far less noise than in the demo itself.

    python scripts/replay_demo_d1.py BEFORE_TREE AFTER_TREE [--rounds 3] [--engines duckdb,sqlite] [--out NAME]

Each tree is a checkout put first on PYTHONPATH (e.g. `git worktree add /tmp/base <commit>`); the calls are
recorded with this checkout's code. Writes benchmarks/NAME.json and .md (default demo_d1_replay).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
Call = tuple[str, list[tuple[str, list[Any]]]]  # ("batch" | "one", [(sql, values), ...])


def record(out: Path) -> None:
    """Runs the demo in this process with D1's calls recorded (the outermost call of each thread) into `out`."""
    from memory_sim.cli import main
    from memory_sim.local.d1 import core

    calls: list[Call] = []
    lock, depth = threading.Lock(), threading.local()

    def recorded(name: str) -> None:
        method = getattr(core.D1CoreDatabase, name)

        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            level = getattr(depth, "n", 0)
            if level == 0:
                statements = args[0] if name == "batch" else [args[0]]
                with lock:
                    calls.append(("batch" if name == "batch" else "one",
                                  [(s.sql, list(s.values)) for s in statements]))
            depth.n = level + 1
            try:
                return method(self, *args, **kwargs)
            finally:
                depth.n = level

        setattr(core.D1CoreDatabase, name, wrapper)

    for name in ("batch", "_run_one", "_execute"):
        recorded(name)
    with tempfile.TemporaryDirectory() as folder:
        sys.argv = ["memory-sim", "demo", "--data", folder]
        with contextlib.suppress(SystemExit):
            main()
    if any(isinstance(v, bytes) for _, statements in calls for _, values in statements for v in values):
        raise SystemExit("the demo bound a blob: this recording keeps text, numbers and NULL only")
    out.write_text(json.dumps(calls))


def replay(calls_file: Path, engine: str) -> dict[str, Any]:
    """The recorded calls on a fresh database (failures counted: the demo's first read precedes its tables)."""
    from memory_sim.local.d1.account import D1Account

    calls = json.loads(calls_file.read_text())
    with tempfile.TemporaryDirectory() as folder:
        db = D1Account(folder, engine).create("memory")  # type: ignore[arg-type]
        cpu, wall, failed = time.thread_time(), time.perf_counter(), 0
        for kind, statements in calls:
            try:
                if kind == "batch":
                    db.batch([db.prepare(sql).bind(*values) for sql, values in statements])
                else:
                    sql, values = statements[0]
                    db.prepare(sql).bind(*values).all()
            except Exception:  # noqa: BLE001 - counted, and the totals must agree between trees
                failed += 1
        result = {"cpu_s": time.thread_time() - cpu, "wall_s": time.perf_counter() - wall, "failed": failed,
                  "calls": len(calls), "statements": sum(len(s) for _, s in calls)}
        db.close()
    return result


def run_tree(tree: Path, calls_file: Path, engine: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, __file__, "--replay", str(calls_file), "--engine", engine],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="*", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engines", default="duckdb,sqlite")
    parser.add_argument("--out", default="demo_d1_replay")
    parser.add_argument("--record", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--replay", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--engine", default="duckdb", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.record is not None:
        record(args.record)
        return
    if args.replay is not None:
        print(json.dumps(replay(args.replay, args.engine)))
        return
    if len(args.trees) != 2:
        parser.error("give BEFORE_TREE and AFTER_TREE")
    with tempfile.TemporaryDirectory() as work:
        calls_file = Path(work) / "calls.json"
        subprocess.run([sys.executable, __file__, "--record", str(calls_file)], capture_output=True, check=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
        runs = []
        for engine in args.engines.split(","):
            for round_no in range(1, args.rounds + 1):
                for code, tree in (("before", args.trees[0]), ("after", args.trees[1])):
                    load = os.getloadavg()[0]
                    result = run_tree(tree, calls_file, engine) | {"engine": engine, "code": code,
                                                                    "round": round_no, "load": round(load, 1)}
                    print(json.dumps(result), file=sys.stderr, flush=True)
                    runs.append(result)
    write(args.out, runs, args.trees)


def write(name: str, runs: list[dict[str, Any]], trees: list[Path]) -> None:
    rows = []
    for engine in dict.fromkeys(r["engine"] for r in runs):
        medians = {}
        for code in ("before", "after"):
            mine = [r for r in runs if r["engine"] == engine and r["code"] == code]
            medians[code] = {k: statistics.median(r[k] for r in mine) for k in ("cpu_s", "wall_s")}
            medians[code] |= {k: mine[0][k] for k in ("calls", "statements", "failed")}
        change = medians["after"]["cpu_s"] / medians["before"]["cpu_s"] - 1
        rows.append((engine, medians, change))
    loads = [r["load"] for r in runs]
    lines = [
        "# The demo's D1 calls replayed, before and after (side by side)",
        "",
        f"Every D1 call of one `memory-sim demo` (8 NPCs, 14 days), recorded once and replayed on a fresh database "
        f"by each tree in fresh processes, alternating; medians of {max(r['round'] for r in runs)} rounds. "
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, load "
        f"{min(loads)}-{max(loads)}. CPU: the replaying thread's. Written by scripts/replay_demo_d1.py.",
        "",
        "| engine | calls (statements) | CPU s before | CPU s after | change | wall s before | wall s after |",
        "|---|---|---|---|---|---|---|",
    ]
    for engine, m, change in rows:
        lines.append(f"| {engine} | {m['after']['calls']} ({m['after']['statements']}) | {m['before']['cpu_s']:.2f} | "
                     f"{m['after']['cpu_s']:.2f} | {change * 100:+.1f} % | {m['before']['wall_s']:.2f} | "
                     f"{m['after']['wall_s']:.2f} |")
    lines += ["", f"Before: {trees[0]}. After: {trees[1]}."]
    out = ROOT / "benchmarks"
    (out / f"{name}.md").write_text("\n".join(lines) + "\n")
    (out / f"{name}.json").write_text(json.dumps({"runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
