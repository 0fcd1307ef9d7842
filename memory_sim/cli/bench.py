"""`memory-sim bench [--quick] [--json]`: every benchmark side by side in one run (memory_sim/bench.py).

Writes bench.json, bench.md and PNG plots into --out (benchmarks/ of the repository by default).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(sub: Any) -> None:
    from memory_sim.cli import arguments

    bench = sub.add_parser("bench", help="benchmarks side by side: index, embeddings, D1, end to end; plots")
    bench.add_argument("--quick", action="store_true", help="10k vectors only, small samples (about 1-2 minutes)")
    bench.add_argument("--json", action="store_true", help="print the report as JSON")
    bench.add_argument("--sizes", type=arguments.index_sizes, default=None, help="index sizes, comma-separated (default 10000,100000,300000)")
    bench.add_argument("--out", type=arguments.folder, default=None, help="output folder (default: the repository's benchmarks/)")
    bench.set_defaults(handler=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    from memory_sim.bench import ROOT, markdown, plot, run_all

    report = run_all(quick=args.quick, sizes=args.sizes, progress=lambda m: print(m, file=sys.stderr, flush=True))
    out = args.out or ROOT / "benchmarks"
    out.mkdir(parents=True, exist_ok=True)
    name = "bench-quick" if args.quick else "bench"
    report["plots"] = [p.name for p in plot(report, out, name)]
    (out / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    table = markdown(report)
    (out / f"{name}.md").write_text(table)
    print(json.dumps(report, indent=2) if args.json else table)
    return 0
