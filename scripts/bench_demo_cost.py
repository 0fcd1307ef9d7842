"""The demo's cost, two checkouts side by side: `memory-sim demo --timings` in fresh processes, the "before" code
and the "after" code alternating (the machine is shared: alternate, repeat, take medians), each run's wall time,
model forward and D1 time, and whether both give the same demo: the same answer text and the same memories with
the same state keys in D1.

    git archive <base commit> | tar -x -C /tmp/before     # the code to compare against
    .venv/bin/python scripts/bench_demo_cost.py --before /tmp/before --runs 4

Writes benchmarks/demo_cost.{json,md}.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys; from memory_sim.cli import main; sys.exit(main())"
# One demo in this process with the model's runs counted: texts and calls, and the forward's CPU time (the thread's
# own, so other processes' load does not count), by who asked (key inference, the index, recall).
COUNTER = """
import json, sys, time, traceback
from collections import Counter
from memory_sim.local.ai.local_ai import LocalAi
from memory_sim.cli import main
stats, run = Counter(), LocalAi.run
def counted(self, model, inputs):
    texts = inputs.get("text")
    names = [(f.name, f.filename) for f in traceback.extract_stack()]
    who = next((w for name, file in reversed(names) for w in [_who(name, file)] if w), "other")
    started = time.thread_time()
    out = run(self, model, inputs)
    stats[who + "_cpu_s"] += time.thread_time() - started
    stats[who + "_texts"] += len(texts) if isinstance(texts, list) else 1
    stats[who + "_calls"] += 1
    return out
def _who(name, file):
    if name in ("keys_for", "aspect_scores", "fitted", "fit_for", "probe_vectors", "env_embed"):
        return "keys"
    if name == "vectors_for":
        return "index"
    return "recall" if "recalling" in file else None
LocalAi.run = counted
main(["--data", sys.argv[1], "demo", "--days", sys.argv[2], "--npcs", sys.argv[3]])
print("counted " + json.dumps({k: round(v, 2) for k, v in sorted(stats.items())}), file=sys.stderr)
"""
ROWS = ("SELECT id, npc_id, content, type, importance, kind, state_key, key_confidence, key_source, index_state "
        "FROM short_term_memories ORDER BY id")


def one_run(code: Path, days: int, npcs: int) -> dict[str, Any]:
    """One fresh demo with `code` first on the path: its timings, and digests of its answer and its D1 rows."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "demo"
        env = {**os.environ, "PYTHONPATH": str(code)}  # run in `code` too: `python -c` puts the cwd first
        load = os.getloadavg()[0]
        started, cpu = time.perf_counter(), _children_cpu()
        done = subprocess.run([sys.executable, "-c", CLI, "--data", str(data), "demo", "--days", str(days), "--npcs",
                               str(npcs), "--timings"], capture_output=True, text=True, env=env, cwd=code, check=False)
        wall, cpu_s = time.perf_counter() - started, _children_cpu() - cpu
        if done.returncode != 0:
            raise RuntimeError(f"the demo failed with {code}: {done.stderr.strip().splitlines()[-3:]}")
        rows = _rows(data)
    timings = json.loads(next(line for line in done.stderr.splitlines() if line.startswith("timings "))[8:])
    answer = re.sub(r"; [\d.]+ s\s*$", "", done.stdout.strip())  # the elapsed time it prints differs by nature
    keyed = sum(1 for row in rows if row[6] is not None)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu_s, 2), "load_before": round(load, 2),
            "model_forward_s": timings["model_forward_s"], "d1_s": timings["d1_s"], "memories": len(rows),
            "keyed": keyed, "answer_sha": _digest(answer), "rows_sha": _digest(json.dumps(rows, default=str)),
            "answer": answer}


def texts_run(code: Path, days: int, npcs: int) -> dict[str, Any]:
    """The model's runs in one demo with `code`: texts, calls and forward CPU seconds, by who asked."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-c", COUNTER, str(Path(tmp) / "demo"), str(days), str(npcs)],
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(code)}, cwd=code,
                              check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the counted demo failed with {code}: {done.stderr.strip().splitlines()[-3:]}")
    counted: dict[str, Any] = json.loads(next(line for line in done.stderr.splitlines()
                                              if line.startswith("counted "))[8:])
    return counted


def _rows(data: Path) -> list[tuple[Any, ...]]:
    import duckdb

    with duckdb.connect(str(data / "d1" / "memory.duckdb"), read_only=True) as db:
        return [tuple(row) for row in db.execute(ROWS).fetchall()]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    def median(name: str) -> float:
        return round(statistics.median(run[name] for run in runs), 2)

    return {"runs": len(runs), "wall_s": median("wall_s"), "model_forward_s": median("model_forward_s"),
            "d1_s": median("d1_s"), "cpu_s": median("cpu_s"),
            "load": [min(r["load_before"] for r in runs), max(r["load_before"] for r in runs)]}


def markdown(results: dict[str, list[dict[str, Any]]], same: dict[str, bool]) -> str:
    lines = ["| pair | load before | before: wall s | forward s | D1 s | after: wall s | forward s | D1 s |",
             "|---|---|---|---|---|---|---|---|"]
    for i, (b, a) in enumerate(zip(results["before"], results["after"], strict=True), 1):
        lines.append(f"| {i} | {b['load_before']} / {a['load_before']} | {b['wall_s']} | {b['model_forward_s']} | "
                     f"{b['d1_s']} | {a['wall_s']} | {a['model_forward_s']} | {a['d1_s']} |")
    before, after = summary(results["before"]), summary(results["after"])
    lines.append(f"| median | | {before['wall_s']} | {before['model_forward_s']} | {before['d1_s']} | "
                 f"{after['wall_s']} | {after['model_forward_s']} | {after['d1_s']} |")
    ratio = after["model_forward_s"] / before["model_forward_s"]
    lines += ["", f"after / before: wall {after['wall_s'] / before['wall_s']:.2f}, model forward {ratio:.2f}; "
              f"CPU {before['cpu_s']} -> {after['cpu_s']} s",
              f"Same answer in every run: {same['answer']}; same memories and state keys in D1: {same['rows']}."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the code to compare against")
    parser.add_argument("--after", type=Path, default=ROOT, help="the code measured (default: this checkout)")
    parser.add_argument("--runs", type=int, default=4, help="pairs of runs, alternating")
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--npcs", type=int, default=8)
    parser.add_argument("--texts", action="store_true", help="also count the model's texts once per side")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "demo_cost")
    args = parser.parse_args(argv)
    results: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    for i in range(args.runs):  # --runs 0 with --texts: only the counts
        order = ("before", "after") if i % 2 == 0 else ("after", "before")  # neither always goes first
        for side in order:
            run = one_run(getattr(args, side), args.days, args.npcs)
            results[side].append(run)
            print(side, {k: v for k, v in run.items() if k != "answer"}, flush=True)
    counted = {side: texts_run(getattr(args, side), args.days, args.npcs) for side in ("before", "after")} \
        if args.texts else {}
    every = results["before"] + results["after"]
    same = {"answer": len({r["answer_sha"] for r in every}) == 1, "rows": len({r["rows_sha"] for r in every}) == 1}
    if not every:
        print(json.dumps(counted, indent=1))
        return 0
    payload = {"before": str(args.before), "after": str(args.after), "machine": f"{os.cpu_count()} cores",
               "summary": {side: summary(runs) for side, runs in results.items()}, "same": same,
               "runs": {side: [{k: v for k, v in r.items() if k != "answer"} for r in runs]
                        for side, runs in results.items()},
               "model_runs": counted, "answer": results["after"][0]["answer"]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(payload, indent=1) + "\n", "utf-8")
    table = markdown(results, same) + "".join(f"\n\nModel runs, {side}: {json.dumps(c)}" for side, c in counted.items())
    args.out.with_suffix(".md").write_text(f"# The demo's cost, before and after\n\n{table}\n", "utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
