"""The demo's D1 work on two versions of the code, side by side: `memory-sim demo --timings` in fresh processes,
the two trees alternating, on each D1 engine; medians of D1 statements and round trips a memory, D1 busy time,
the model's forward time and the wall time.

    python scripts/bench_demo_d1.py BEFORE_TREE AFTER_TREE [--pairs 3] [--engines duckdb,sqlite] [--out NAME]

Each tree is a checkout put first on PYTHONPATH (e.g. `git worktree add /tmp/base 4d11a42`). Writes
benchmarks/NAME.json and .md (default demo_d1).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

RUN = ("import json, sys; from memory_sim.bench.demo import demo_breakdown; "
       "print(json.dumps(demo_breakdown(extra=tuple(sys.argv[1:]))))")
FIELDS = ("wall_s", "floor_model_forward_s", "d1_s", "d1_statements", "d1_round_trips", "d1_statements_per_memory",
          "d1_round_trips_per_memory", "memories")


def one_run(tree: Path, engine: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", RUN, "--d1-engine", engine], capture_output=True, text=True,
                          env=env, cwd=tree, check=True)  # `python -c` puts the working folder first on the path
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["load"] = round(os.getloadavg()[0], 1)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--engines", default="duckdb,sqlite")
    parser.add_argument("--out", default="demo_d1")
    parser.add_argument("--dir", type=Path, default=Path(__file__).resolve().parent.parent / "benchmarks")
    args = parser.parse_args()
    runs: list[dict[str, Any]] = []
    for engine in args.engines.split(","):
        for pair in range(args.pairs):
            order = (("before", args.before), ("after", args.after))
            for name, tree in order if pair % 2 == 0 else reversed(order):
                result = {"engine": engine, "pair": pair + 1, "code": name, **one_run(tree, engine)}
                runs.append(result)
                print(json.dumps({k: result[k] for k in ("engine", "pair", "code", "load", *FIELDS)}), flush=True)
    medians = {f"{engine} {code}": {f: round(statistics.median(r[f] for r in runs
                                                                if r["engine"] == engine and r["code"] == code), 3)
                                    for f in FIELDS}
               for engine in args.engines.split(",") for code in ("before", "after")}
    out = args.dir
    (out / f"{args.out}.json").write_text(json.dumps({"runs": runs, "medians": medians}, indent=1) + "\n", "utf-8")
    lines = ["| engine | code | wall s | model forward s | D1 busy s | D1 / forward | statements (a memory) |"
             " round trips (a memory) | memories |", "|---|---|---|---|---|---|---|---|---|"]
    for key, m in medians.items():
        engine, code = key.split()
        lines.append(f"| {engine} | {code} | {m['wall_s']} | {m['floor_model_forward_s']} | {m['d1_s']} | "
                     f"{m['d1_s'] / m['floor_model_forward_s']:.2f} | {m['d1_statements']:.0f} "
                     f"({m['d1_statements_per_memory']}) | {m['d1_round_trips']:.0f} ({m['d1_round_trips_per_memory']})"
                     f" | {m['memories']:.0f} |")
    (out / f"{args.out}.md").write_text("\n".join(lines) + "\n", "utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
