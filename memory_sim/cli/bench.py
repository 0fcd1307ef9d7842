"""`memory-sim bench [--quick] [--json]`: every benchmark side by side in one run (memory_sim/bench/suite.py).

Writes bench.json, bench.md and PNG plots into --out (./memory-sim-bench by default, in the working directory).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path("memory-sim-bench")


def register(sub: Any) -> None:
    from memory_sim.cli import arguments

    bench = sub.add_parser("bench", help="benchmarks side by side: index, embeddings, D1, end to end; plots")
    bench.add_argument("--quick", action="store_true", help="10k vectors only, small samples (about 1-2 minutes)")
    bench.add_argument("--json", action="store_true", help="print the report as JSON")
    bench.add_argument(
        "--sizes",
        type=arguments.index_sizes,
        default=None,
        help="index sizes, comma-separated (default 10000,100000,300000)",
    )
    bench.add_argument("--out", type=arguments.folder, default=DEFAULT_OUT,
                       help=f"output folder (default: ./{DEFAULT_OUT} in the working directory)")
    bench.set_defaults(handler=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    from memory_sim.errors import ConfigError

    if importlib.util.find_spec("psutil") is None:
        raise ConfigError("memory-sim bench needs psutil: pip install 'memory_sim[bench]'")
    from memory_sim.bench.suite import markdown, plot, run_all

    report = run_all(quick=args.quick, sizes=args.sizes, progress=lambda m: print(m, file=sys.stderr, flush=True))
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    name = "bench-quick" if args.quick else "bench"
    if importlib.util.find_spec("matplotlib") is None:
        print(
            "memory-sim: plots skipped: matplotlib is not installed (pip install 'memory_sim[bench]')", file=sys.stderr
        )
        report["plots"] = []
    else:
        report["plots"] = [p.name for p in plot(report, out, name)]
    (out / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    table = markdown(report)
    (out / f"{name}.md").write_text(table)
    print(json.dumps(report, indent=2) if args.json else table)
    return 0
